package redlock

// Resume takes over a lock by extending it, never by setting it: its one
// round runs the Extend script (compare-and-PEXPIRE, extend.lua), which
// touches a key only where it still holds the token and never creates one.
// So a Resume cannot make a lock exist that a quorum did not already hold
// with that token, and a failed Resume leaves nothing of its own behind:
// there is nothing to release. The masters where the PEXPIRE landed keep
// the token's key, now with ttl, until it expires or the token's holder
// releases it: Resume deletes nothing, for the token's first holder may
// still be alive and holding.

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// Resume takes over the lock of key that is held with token, typically by
// another process: a worker the holder handed its Token to, or a job
// restarted after a crash that logged it. It extends the lock to ttl, from
// now, on every master that still holds key with token (compare-and-
// PEXPIRE), and succeeds when a quorum did so in time. The returned Lock is
// like one from TryLock: Until is start + ttl - drift, as after an
// Extend; Extend, Unlock, Done, Err and Context work as usual, and it is
// renewed with Config.AutoRenew. With Config.Fencing its Fence is the
// highest fencing counter among the masters that resumed it, each seeded
// from the master's clock as an acquisition's is, written back to them
// before Resume returns: no lower than the original holder's token (whose
// quorum shares a master with this one; a counter lost there since, in a
// restart or a failover, comes back from the clock above it), usually
// above it, so that the resource turns the giver away from then on, and
// lower than the next holder's. Without fencing it is 0.
//
// Resume never creates a lock. It fails, with a *QuorumError that matches
// ErrNotAcquired, when fewer than a quorum still hold key with token (the
// token is wrong, the lock expired or was released, or too few masters
// answered), or when the quorum came too late. A failed Resume deletes
// nothing: the masters that it did extend keep the token's key for up to
// ttl, which may delay other clients but never lets two hold the lock.
//
// It is a hand-over: from the moment Resume is called the original holder
// must stop using the lock, and must neither Extend nor Unlock it, since
// both act on the same keys. Nor may it hand over a lock whose Unlock it
// called, even one that failed: the releases of a failed Unlock are still
// on their way, or retried, and would delete the taker's lock. Resume applies to locks of Locker.Lock and
// TryLock (plain or fenced), not to reentrant, read-write or multi-key
// locks. An empty token, an empty key or a bad ttl give an error matching
// ErrInvalid, and nothing is sent.
//
// A lock acquired WithMetadata keeps its holder record: Resume moves it
// with the lock (and the resumed lock's Extends, renewal and Unlock as the
// giver's would), and WithMetadata here replaces its fields, on every
// master that resumed it, with the taker's (the record then names them;
// Lock.Metadata returns them). Without WithMetadata the record keeps the
// giver's fields, and Lock.Metadata returns nil.
//
// opts override the Locker's Config for this call (Option): WithFencing
// must say how the lock was acquired, and WithToken, WithRetry and
// WithMaxAttempts do not apply (the token is the one given; there is one
// attempt).
func (l *Locker) Resume(ctx context.Context, key, token string, ttl time.Duration, opts ...Option) (lk *Lock, err error) {
	cc, err := l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	v := resumed(cc)
	attempts := 0
	if l.observer != nil {
		start := l.clock.Now()
		defer func() {
			l.observer.Acquire(AcquireEvent{Key: key, Kind: v.kind, Wait: l.clock.Now().Sub(start), Attempts: attempts, Err: err, ctx: detach(ctx)})
		}()
	}
	if token == "" {
		return nil, invalid("empty token")
	}
	if err := l.checkCall(ctx, key, ttl); err != nil {
		return nil, err
	}
	keys := v.keys(l.prefix + key)
	if err := checkDerivable(l.prefix + key); err != nil {
		return nil, err
	}
	attempts = 1
	return l.resume(ctx, cc, v, key, keys, token, ttl)
}

// resumed is the variant of a resumed lock: plain or fenced as cc says,
// always with the holder record's key, so that a lock acquired
// WithMetadata keeps its record moving with it and deleted by its Unlock
// (where the giver's lock had none, there is none to move); with cc's
// metadata, its fields replace the record.
func resumed(cc *callConfig) *variant {
	v := recordedPlain
	if cc.fencing {
		v = recordedFenced
	}
	if cc.metadata != nil {
		v = withRecord(v, cc.metadata)
	}
	return v
}

// resume is Resume's one round: the Extend script on every master, deciding
// at the quorum (Locker.round, as an attempt's). A call whose outcome is
// unknown counts, like an Extend's, as one that may still land with ttl.
func (l *Locker) resume(ctx context.Context, cc *callConfig, v *variant, key string, keys []string, token string, ttl time.Duration) (*Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, l.quorumError(opLock, key, nil, err) // nothing sent
	}
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond // what the masters enforce
	// Nobody sees lk before it is returned: Until is set at the end.
	head := l.headOf(keys, token)
	lk := newLock(l, v, key, keys, head, token, ttl, 0, time.Time{})
	lk.addUnknownLocked(ttl)
	resume, counter := v.extend, ""
	if v.fenced {
		resume, counter = resumeFencedScript, keys[len(keys)-1] // also reads the fencing counter
	}
	c := l.extendCall(opLock, resume, head, ms)
	c.prepared = append(c.prepared, v.recordArgs...) // WithMetadata's fields replace the record
	c.then = func(i int, vote quorum.Vote) {
		if vote.Err == nil { // it ran on master i: known from now on
			lk.mu.Lock()
			lk.resolveLocked(i, ttl)
			lk.mu.Unlock()
		}
	}
	res, start, fence, err := l.round(ctx, c, counter, ms)
	ok := err == nil && res.OK()
	until, valid := l.validity(ttl, start)
	if !ok || !valid {
		qerr := l.quorumError(opLock, key, res, err)
		qerr.Late = ok // a quorum, but no validity left
		return nil, qerr
	}
	lk.mu.Lock()
	lk.until, lk.granted, lk.fence = until, l.clock.Now(), fence
	lk.mu.Unlock()
	l.granted(ctx, lk, cc)
	return lk, nil
}
