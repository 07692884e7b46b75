package redlock

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/redlock/layout"
)

// Reentrant is a lock that one owner may hold several times over: each
// Lock or TryLock by the owner adds a hold, each Unlock of a returned *Lock
// takes one away, and the last Unlock releases it. Another owner is refused
// while any hold remains. On each master the lock is a hash with the
// lock's TTL: the field "owner" names the owner, and each hold has a field
// "h:<hold id>" of its own, a random id per acquisition. Extending or
// renewing any of the owner's *Locks extends the whole hash; it never
// shortens the hash's TTL, so no hold of the owner cuts another one short.
//
// A hold is released once, by its own id: a second Unlock of the same *Lock
// counts nothing down, and neither does the late Unlock of a hold that
// expired while the owner took the lock afresh (a retried job under the same
// id), which leaves the owner's new holds alone.
//
// With Config.Fencing every hold carries a fencing token (Lock.Fence): an
// owner's nested holds get a token no lower than its first hold's (each
// master's counter is seeded from its clock, as an acquisition's is, so
// that a counter that lost the first hold's write-back in a restart or a
// failover comes back above it; the nested token is then usually greater),
// and the next owner's token is strictly greater than every token of this
// one. Pass the newest hold's token to the resource.
//
// The owner is whatever identifies "the same holder" in your program: a
// request id, a job id. Holds are kept per master: a master that missed
// an acquire (it failed or answered late) lacks that hold, and a failed
// attempt's master whose answer is unknown is released like the others (a release finds the
// hold or leaves a tombstone that refuses its late acquire). Faults can
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

// variant is the reentrant variant of r's owner: each attempt's token
// is a hold id of its own (a fresh random value), and the owner goes to the
// acquire script as its own argument.
func (r *Reentrant) variant(cc *callConfig) *variant {
	v := &variant{
		kind:        KindReentrant,
		owner:       r.owner,
		keys:        func(key string) []string { return []string{key} },
		acquire:     reentrantAcquireScript,
		extend:      reentrantExtendScript,
		check:       reentrantCheckScript,
		release:     reentrantReleaseScript,
		acquireArgs: []any{r.owner},
		unqueued:    true,
	}
	if cc.fencing {
		// The acquire script takes the counter as a further key (see
		// reentrant_acquire.lua).
		v.keys = func(key string) []string { return []string{key, fenceKey(key)} }
		v.fenced = true
	}
	return v
}

// TryLock makes one attempt to add a hold for ttl. opts override the
// Locker's Config for this call (Option).
func (r *Reentrant) TryLock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return r.acquire(ctx, ttl, false, opts)
}

// Lock adds a hold for ttl, waiting as Locker.Lock does until ctx ends.
// opts override the Locker's Config for this call (Option).
func (r *Reentrant) Lock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return r.acquire(ctx, ttl, true, opts)
}

func (r *Reentrant) acquire(ctx context.Context, ttl time.Duration, retry bool, opts []Option) (*Lock, error) {
	if r.owner == "" {
		return nil, invalid("empty owner")
	}
	cc, err := r.l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	// Every hold keeps the owner's holder record in step with the hash
	// (recordedKind), with metadata or without: another hold of the
	// owner may have written it.
	return r.l.acquire(ctx, cc, recordedKind(r.variant(cc), layout.Holder(r.l.prefix+r.key), cc.metadata), r.key, ttl, retry)
}
