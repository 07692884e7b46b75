package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// A blocked cycle: on keys of its own, a client takes the holds that a
// call of some kind must wait for (the blockers), then makes that call,
// as a Lock whose context ends at a random point of its waiting (between
// attempts, during the wake-on-release subscription, in an attempt), or as
// a TryLock. The call must fail (a grant shows as an overlap with a
// blocker), and once it returned, nothing it wrote may remain on any
// master (keystate.go): a waiting writer's mark, a fair registration, a
// permit, a key of a multi-key set, another owner's hold. Then the
// blockers are released, and nothing of them may remain either.

// blocked is a way for a call to wait for holds of the same client.
type blocked string

// The blocked calls.
const (
	blockedPlain     blocked = "plain"     // a plain lock held; Lock of it
	blockedWriter    blocked = "rw-writer" // a reader holds; a writer waits
	blockedReader    blocked = "rw-reader" // a writer holds; a reader waits
	blockedFair      blocked = "fair"      // a fair lock held; a fair waiter waits
	blockedSemaphore blocked = "semaphore" // both permits held; a third waits
	blockedMulti     blocked = "multi"     // one key of a set held; the set waits
	blockedReentrant blocked = "reentrant" // an owner holds; another owner waits
)

// blockedOf lists the blocked calls of kind k.
func blockedOf(k Kind) []blocked {
	switch k {
	case Plain:
		return []blocked{blockedPlain}
	case RW:
		return []blocked{blockedWriter, blockedReader}
	case Fair:
		return []blocked{blockedFair}
	case Semaphore:
		return []blocked{blockedSemaphore}
	case Multi:
		return []blocked{blockedMulti}
	case Reentrant:
		return []blocked{blockedReentrant}
	}
	return nil
}

// pBlocked is the probability that a cycle of a kind is a blocked cycle.
const pBlocked = 0.1

// blockedPermits is the K of the blocked semaphore.
const blockedPermits = 2

// blockedWait draws how long a blocked Lock waits: anywhere from not at
// all to three node timeouts (a few attempts and the waits between them).
func (s *step) blockedWait() time.Duration { return s.between(0, 3*NodeTimeout) }

// ownName is the name of client c's own lock for the blocked call b.
func (c *Client) ownName(b blocked) string { return fmt.Sprintf("own%d.%s", c.ID, b) }

// blockedCycle runs the blocked call b of client c on the lock named name
// (which no other client uses): the call waits up to wait (a TryLock when
// try is set). bg bounds the harness's own reads and releases.
func (c *Client) blockedCycle(ctx, bg context.Context, b blocked, name string, try bool, wait time.Duration) error {
	e := c.env
	pattern := "*" + e.Key(name) + "*"
	acquires := b == blockedReentrant // released only where granted
	before := e.direct.stableStates(bg, pattern)
	blockedSince := time.Now()
	bctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	blockers, err := c.long.block(bctx, b, name) // long TTLs: the long Lockers
	cancel()
	defer func() {
		for _, h := range blockers {
			rctx, cancel := context.WithTimeout(bg, ReleaseTimeout)
			h.releaseWith(rctx)
			cancel()
		}
		c.restored(bg, name, pattern, before, fmt.Sprintf("the release of the holds a %s call waited for", b), blockedSince, time.Time{}, acquires)
	}()
	if err != nil {
		return harness(err)
	}
	held := e.direct.stableStates(bg, pattern)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	since := time.Now()
	got, err := c.long.waitBlocked(wctx, b, name, try)
	if err != nil {
		if herr := harness(err); herr != nil {
			return herr
		}
		how := "Lock"
		if try {
			how = "TryLock"
		}
		// A blocker's write that failed to return on a master may land
		// there after held was read: such a master is excused.
		c.restored(bg, name, pattern, held, fmt.Sprintf("a %s %s that waited for holds of its own client (up to %v) and failed", b, how, wait),
			since, blockedSince, acquires)
		return nil
	}
	// Granted beside a blocker: the checker shows the overlap.
	for _, h := range got {
		rctx, cancel := context.WithTimeout(bg, ReleaseTimeout)
		h.releaseWith(rctx)
		cancel()
	}
	return nil
}

// blockedTTL is the TTL of the blockers and of the blocked calls: the
// blockers must outlast the blocked call and the checks that follow it,
// and what a blocked call leaves behind must outlast those checks.
const blockedTTL = probeTTL

// block takes the holds that a blocked call b waits for, on the lock
// named name (and its siblings for a multi-key set).
func (c *Client) block(ctx context.Context, b blocked, name string) ([]*Held, error) {
	key := c.env.Key(name)
	one := func(h *Held, err error) ([]*Held, error) {
		if err != nil {
			return nil, err
		}
		return []*Held{h}, nil
	}
	switch b {
	case blockedWriter:
		return one(c.record(checker.Event{Key: name, Shared: true}, target{mode: modeZset, key: "{" + key + "}:r"},
			func() (*redlock.Lock, error) { return c.Locker.RWMutex(key).RLock(ctx, blockedTTL) }))
	case blockedReader:
		return one(c.record(checker.Event{Key: name}, target{mode: modeString, key: "{" + key + "}:w"},
			func() (*redlock.Lock, error) { return c.Locker.RWMutex(key).Lock(ctx, blockedTTL) }))
	case blockedFair:
		return one(c.record(checker.Event{Key: name}, target{mode: modeString, key: key},
			func() (*redlock.Lock, error) { return c.Locker.Fair(key).Lock(ctx, blockedTTL) }))
	case blockedSemaphore:
		var hs []*Held
		for range blockedPermits {
			h, err := c.semaphoreHold(ctx, name, blockedPermits, false, blockedTTL)
			if err != nil {
				return hs, err
			}
			hs = append(hs, h)
		}
		return hs, nil
	case blockedMulti:
		name = multiName(name, 1)
		key = c.env.Key(name)
	case blockedReentrant:
		owner := name + ".holder"
		return one(c.record(checker.Event{Key: name, Owner: owner}, target{mode: modeHash, key: key, member: owner},
			func() (*redlock.Lock, error) { return c.Locker.Reentrant(key, owner).Lock(ctx, blockedTTL) }))
	}
	return one(c.record(checker.Event{Key: name}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return c.plain.Lock(ctx, key, blockedTTL) }))
}

// multiName names key i of the blocked multi-key set name.
func multiName(name string, i int) string { return fmt.Sprintf("%s-%d", name, i) }

// waitBlocked makes the blocked call b on the lock named name: Lock (or
// TryLock) of what block holds. It returns the holds it was granted, which
// it must not be.
func (c *Client) waitBlocked(ctx context.Context, b blocked, name string, try bool) ([]*Held, error) {
	key := c.env.Key(name)
	ttl := blockedTTL // what it leaves behind outlives the checks
	one := func(h *Held, err error) ([]*Held, error) {
		if err != nil {
			return nil, err
		}
		return []*Held{h}, nil
	}
	ev := checker.Event{Key: name, Waits: !try}
	if d, ok := ctx.Deadline(); ok && !try {
		ev.GiveUp = c.env.History.Offset(d)
	}
	switch b {
	case blockedWriter, blockedReader:
		m := c.Locker.RWMutex(key)
		reader := b == blockedReader
		lock, t := m.Lock, target{mode: modeString, key: "{" + key + "}:w"}
		switch {
		case reader && try:
			lock, t = m.TryRLock, target{mode: modeZset, key: "{" + key + "}:r"}
		case reader:
			lock, t = m.RLock, target{mode: modeZset, key: "{" + key + "}:r"}
		case try:
			lock = m.TryLock
		}
		ev.Shared = reader
		return one(c.record(ev, t, func() (*redlock.Lock, error) { return lock(ctx, ttl) }))
	case blockedFair:
		f := c.Locker.Fair(key)
		lock := f.Lock
		if try {
			lock = f.TryLock
		}
		return one(c.record(ev, target{mode: modeString, key: key}, func() (*redlock.Lock, error) { return lock(ctx, ttl) }))
	case blockedSemaphore:
		return one(c.semaphoreHold(ctx, name, blockedPermits, try, ttl))
	case blockedMulti:
		names := []string{multiName(name, 0), multiName(name, 1), multiName(name, 2)}
		return c.lockMulti(ctx, names, try, ttl)
	case blockedReentrant:
		owner := name + ".waiter"
		r := c.Locker.Reentrant(key, owner)
		lock := r.Lock
		if try {
			lock = r.TryLock
		}
		ev.Owner = owner
		return one(c.record(ev, target{mode: modeHash, key: key, member: owner}, func() (*redlock.Lock, error) { return lock(ctx, ttl) }))
	}
	lock := c.plain.Lock
	if try {
		lock = c.plain.TryLock
	}
	return one(c.record(ev, target{mode: modeString, key: key}, func() (*redlock.Lock, error) { return lock(ctx, key, ttl) }))
}
