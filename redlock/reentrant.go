package redlock

import (
	"context"
	"time"
)

// Reentrant is a lock that one owner may hold several times over: each
// Lock or TryLock by the owner adds a hold, each Unlock of a returned *Lock
// takes one away, and the last Unlock releases it. Another owner is refused
// while any hold remains. On each master the lock is a hash, key -> {owner:
// hold count}, with the lock's TTL; extending or renewing any of the
// owner's *Locks extends the whole hash and keeps the count; it never
// shortens the hash's TTL, so no hold of the owner cuts another one short.
//
// With Config.Fencing every hold carries a fencing token (Lock.Fence): an
// owner's nested holds get a token no lower than its first hold's (equal,
// unless faults or other owners' failed attempts moved the counters), and
// the next owner's token is strictly greater than every token of this one.
// Pass the newest hold's token to the resource.
//
// The owner is whatever identifies "the same holder" in your program: a
// request id, a job id. Holds are counted per master: a master that missed
// an acquire (it failed or answered late) counts one hold fewer, and a
// failed attempt releases only the masters that granted it, so a master
// whose answer was lost may keep its count until the TTL runs out. That can
// delay other owners, never admit two.
type Reentrant struct {
	l          *Locker
	key, owner string
}

// Reentrant returns the reentrant lock named key, held as owner. Names are
// per kind of lock: do not lock one key both plainly and reentrantly.
func (l *Locker) Reentrant(key, owner string) *Reentrant {
	return &Reentrant{l: l, key: key, owner: owner}
}

var reentrant = &variant{
	kind:          KindReentrant,
	owned:         true,
	keys:          func(key string) []string { return []string{key} },
	acquire:       reentrantAcquireScript.acquire,
	extend:        reentrantExtendScript,
	release:       reentrantReleaseScript,
	keepUncertain: true,
	unqueued:      true,
}

// reentrantFenced is reentrant with fencing tokens: the acquire script
// takes the counter as a second key (see reentrant_acquire.lua).
var reentrantFenced = &variant{
	kind:          KindReentrant,
	owned:         true,
	keys:          func(key string) []string { return []string{key, fenceKey(key)} },
	acquire:       reentrantAcquireScript.acquire,
	extend:        reentrantExtendScript,
	release:       reentrantReleaseScript,
	keepUncertain: true,
	unqueued:      true,
	fenced:        true,
}

func (r *Reentrant) variant() *variant {
	if r.l.fencing {
		return reentrantFenced
	}
	return reentrant
}

// TryLock makes one attempt to add a hold for ttl.
func (r *Reentrant) TryLock(ctx context.Context, ttl time.Duration) (*Lock, error) {
	return r.l.acquire(ctx, r.variant(), r.key, r.owner, ttl, false)
}

// Lock adds a hold for ttl, waiting as Locker.Lock does until ctx ends.
func (r *Reentrant) Lock(ctx context.Context, ttl time.Duration) (*Lock, error) {
	return r.l.acquire(ctx, r.variant(), r.key, r.owner, ttl, true)
}
