package redlock

// How a fair lock orders its waiters across processes, and why the order
// holds over a quorum.
//
//   - A waiter draws a ticket the way fencing tokens are drawn: INCR of the
//     key's ticket counter on every master, the maximum over a quorum
//     (fair_draw.lua). Its registration writes the ticket back: counter =
//     max(counter, ticket) wherever it registers. So a waiter that draws
//     after another one registered on a quorum meets one of those masters
//     and draws a greater ticket: tickets follow the order of arrival. Two
//     waiters that draw at once may draw equal tickets; their ids break the
//     tie, the same way on every master.
//   - Every attempt registers the waiter (or refreshes its registration) in
//     the key's queue on each master, and that master grants the lock key
//     (SET NX PX, as a plain lock) only to its lowest live registration
//     (fair_acquire.lua). A waiter registered on a quorum blocks every later
//     ticket on those masters, and any quorum a later waiter could gather
//     shares one of them: no later ticket gets the lock while an earlier
//     waiter is registered and alive.
//   - Mutual exclusion rests on the lock key alone, exactly as for a plain
//     lock: the same validity, drift and release-on-failure rules. A fault
//     in the ordering can delay or reorder waiters, never admit two.
//   - A registration expires registration() after its last refresh, on the
//     master's own clock: a waiter that crashed holds up the others at most
//     that long. A live waiter refreshes it on every attempt and, between
//     attempts, every third of that (keepRegistered). When it gives up (its
//     context ended, a TryLock failed) it removes it from every master.
//   - The registration stays while its waiter holds the lock (a failed
//     attempt keeps its place); Unlock removes it with the lock key and
//     announces the release, which wakes the next waiter at once.
//
// Fair waiters stay out of the Locker's per-key queue (variant.unqueued):
// that queue lets only its head make attempts, and a head with a later
// ticket than a waiter behind it would wait forever for it.

import (
	"context"
	"crypto/rand"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/redlock/layout"
)

// Fair is a mutual-exclusion lock whose waiters are served in order of
// arrival, across processes: each Lock call draws a ticket from the masters
// and registers it there, and a master grants the lock only to the lowest
// live ticket registered with it. A waiter that arrives while another one
// waits gets the lock after it, whichever process either runs in. (An
// ordinary Lock lets every waiter race for each release, which serves some
// processes far more often than others.)
//
// The lock itself is the key, holding the holder's token with the TTL, as
// for Locker.Lock: the same validity, Extend, renewal and Unlock rules, and
// Lock.Fence with Config.Fencing. The queue lies beside it, under the key's
// hash tag, so each master may be a Redis Cluster shard: "{key}:fair:queue"
// (waiter -> ticket), "{key}:fair:expiry" (waiter -> expiry) and
// "{key}:fair:ticket" (the ticket counter). When key has a hash tag of its
// own, it is the prefix as it is; a key without one that contains '}' is
// refused (ErrInvalid). All three expire once no waiter uses them. A waiter
// that gave up or unlocked leaves a tombstone, "{key}:tomb:<waiter id>", so
// that a late attempt of it registers nothing.
//
// A waiter's registration lives 6 x Config.NodeTimeout, at least 300ms,
// past its last refresh on a master's clock; a waiting Lock refreshes it
// every third of that. A waiter that crashed holds up those behind it at
// most that long; one that gives up removes it at once. Waiters are woken
// by release announcements (wake on release) and fall back on the
// Config.Retry backoff.
type Fair struct {
	l   *Locker
	key string
}

// Fair returns the fair lock named key. Names are per kind of lock: a plain
// Lock of the same key excludes a fair holder too, but jumps the queue.
func (l *Locker) Fair(key string) *Fair { return &Fair{l: l, key: key} }

// TryLock draws a ticket and makes one attempt to acquire the lock for ttl:
// it succeeds only when no earlier waiter is registered and the lock is
// free. On failure the error matches ErrNotAcquired.
// opts override the Locker's Config for this call (Option).
func (f *Fair) TryLock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return f.acquire(ctx, ttl, false, opts)
}

// Lock draws a ticket and waits for its turn, then acquires the lock for
// ttl, retrying until it succeeds or ctx ends, as Locker.Lock does. When
// ctx ends the error matches both ctx.Err() and ErrNotAcquired, and the
// waiter's registration is removed from the masters. opts override the
// Locker's Config for this call (Option; WithMaxAttempts counts the
// ticket's draw and the attempts apart).
func (f *Fair) Lock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return f.acquire(ctx, ttl, true, opts)
}

// fairKeys are the lock key, then the queue, the expiries, the ticket
// counter and the tombstone of waiter id, in the key's hash slot.
func fairKeys(key, id string) []string {
	k := layout.FairKeys(key)
	return []string{key, k.Queue, k.Expiry, k.Ticket, tombKey(key, id)}
}

// registration is how long a waiter's registration lives on a master after
// its last refresh.
func (l *Locker) registration() time.Duration {
	return max(6*l.nodeTimeout, 300*time.Millisecond)
}

func (f *Fair) acquire(ctx context.Context, ttl time.Duration, retry bool, opts []Option) (*Lock, error) {
	l := f.l
	if err := l.checkCall(ctx, f.key, ttl); err != nil {
		return nil, err
	}
	cc, err := l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	rkey := l.prefix + f.key // its name on the masters
	if err := checkDerivable(rkey); err != nil {
		return nil, err
	}
	reg := l.registration()
	start := l.clock.Now()
	id := rand.Text()
	keys := fairKeys(rkey, id)
	ticket, err := f.draw(ctx, cc, keys[3], reg, retry)
	if err != nil {
		if l.observer != nil {
			l.observer.Acquire(AcquireEvent{Key: f.key, Kind: KindFair, Wait: l.clock.Now().Sub(start), Err: err, ctx: detach(ctx)})
		}
		return nil, err
	}
	if cc.fencing {
		keys = append(keys, fenceKey(rkey))
	}
	v := fairWaiter(id, ticket, reg, keys, cc.fencing)
	if cc.metadata != nil {
		v = recordedKind(v, layout.Holder(rkey), cc.metadata)
	}
	if !retry {
		return l.acquire(ctx, cc, v, f.key, ttl, false)
	}
	stop := l.keepRegistered(ctx, keys[1:4], id, reg)
	defer stop()
	return l.acquire(ctx, cc, v, f.key, ttl, true)
}

// fairWaiter is the variant of one waiter, whose id, ticket and keys stay
// the same across its attempts.
func fairWaiter(id string, ticket int64, reg time.Duration, keys []string, fencing bool) *variant {
	return &variant{
		kind:        KindFair,
		keys:        func(string) []string { return keys },
		fenced:      fencing,
		unqueued:    true,
		acquire:     fairAcquireScript,
		acquireArgs: []any{id, ticket, reg.Milliseconds()},
		extend:      extendScript, // on the lock key, keys[0]
		check:       checkScript,
		release:     fairReleaseScript,
		releaseArgs: []any{id},
		giveUp:      &fairLeaveScript,
	}
}

// draw draws a ticket from the counter: the maximum of the counters a
// quorum of the masters answered. With too few answers it draws again
// after the Retry backoff while retry is set and ctx lasts (the increments
// that landed only leave gaps between tickets).
func (f *Fair) draw(ctx context.Context, cc *callConfig, counter string, reg time.Duration, retry bool) (ticket int64, err error) {
	l := f.l
	w := waiting{l: l, retry: cc.retry, tried: true} // backs off only: no queue, no subscription
	defer w.close()
	l.attempts(ctx, cc, &w, retry, func(int) bool {
		if cerr := ctx.Err(); cerr != nil {
			if err == nil {
				err = l.quorumError(opLock, f.key, nil, cerr)
			}
			return false
		}
		res, ferr := l.fanOut(ctx, l.newCall(opLock, fairDrawScript, counter, nil, reg.Milliseconds()))
		if ferr == nil && res.OK() {
			for i, v := range res.Votes {
				if res.Answered[i] && v.Yes {
					ticket = max(ticket, v.Value.(int64))
				}
			}
			err = nil
			return true
		}
		err = l.quorumError(opLock, f.key, res, ferr)
		return false
	})
	if qerr, ok := err.(*QuorumError); ok && retry && qerr.Cause == nil {
		qerr.Cause = ctx.Err()
	}
	return ticket, err
}

// keepRegistered refreshes the registration of waiter id on every master
// every third of its lifetime reg, until stop is called; stop returns once
// no refresh is in flight. keys are the queue, the expiries and the ticket
// counter. A refresh never re-adds a registration (fair_refresh.lua), so
// one that lands after the waiter gave up or unlocked changes nothing.
func (l *Locker) keepRegistered(ctx context.Context, keys []string, id string, reg time.Duration) (stop func()) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(reg / 3)
		defer tick.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-tick.C:
				l.fanOut(rctx, l.newCall(opLock, fairRefreshScript, keys[0], keys[1:], id, reg.Milliseconds()))
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
