package redlock

// The invariant this file keeps: a lock's Until is never later than the
// moment until which a quorum of the masters is sure to keep its key.
//
// An Extend's command may land on a master late: after the call failed or
// timed out, or after the fan-out decided at the quorum and returned. So
//
//   - Extends of one Lock (the renewal's included) run one at a time, so
//     that reply order cannot mix two of them up.
//   - From the moment an Extend with TTL t that starts at s is sent, Until
//     <= s + t - drift (it may land at once, and the masters count t from
//     when it lands, after s), whatever its outcome (success, refusal,
//     failure, late quorum): a failed or late Extend lowers Until, never
//     raises it. So a holder that reads Until while a shorter Extend (a renewal
//     beside a longer manual Extend) is in flight never sees more than the
//     masters may enforce.
//   - An Extend whose outcome on a master is not known (no reply came
//     back) stays "unknown" there: it may still land. A later Extend counts
//     a granting master as keeping the key only for min(its TTL, the TTL of
//     every earlier unknown Extend there) from its own start, and a quorum
//     of those must reach its Until. Extends with one TTL (renewals) never
//     shorten each other this way, so a master whose calls all time out does
//     not cut a renewed lock short.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
)

// Extend sets the lock's TTL on the masters to ttl, counted from now, with
// compare-and-PEXPIRE: only masters that still hold our token are extended,
// and an expired key is never re-created. It succeeds when a quorum extended
// it in time (ttl - elapsed - drift > 0); Until then moves to start + ttl -
// drift (less, if an earlier Extend with a shorter TTL may still land on
// those masters). If the
// lock's validity has already passed, Extend sends nothing and returns an
// error matching ErrLockLost; so does a failed extension (a *QuorumError).
// After a failed extension the lock stays valid until the earlier of the
// Until it had and start + ttl - drift, since the new TTL may have landed on
// some masters. Extends of one lock run one at a time: a second
// one waits for the first, or for its ctx.
func (lk *Lock) Extend(ctx context.Context, ttl time.Duration) error {
	return lk.extend(ctx, ttl, false)
}

// extend is Extend, told to the Observer as the auto-renewal's when auto.
func (lk *Lock) extend(ctx context.Context, ttl time.Duration, auto bool) (err error) {
	l := lk.l
	if o := l.observer; o != nil {
		ectx := lk.ctx // the renewal's: the acquisition's context
		if !auto {
			ectx = detach(ctx)
		}
		defer func() {
			o.Renew(RenewEvent{Key: lk.key, Kind: lk.v.kind, Auto: auto, Until: lk.Until(), Err: err, ctx: ectx})
		}()
	}
	if err := l.checkCall(ctx, lk.key, ttl); err != nil {
		return err
	}
	lk.mu.Lock()
	if lk.extending == nil {
		lk.extending = make(chan struct{}, 1)
	}
	extending := lk.extending
	lk.mu.Unlock()
	select {
	case extending <- struct{}{}:
		defer func() { <-extending }()
	case <-ctx.Done():
		return l.quorumError(opExtend, lk.key, nil, ctx.Err())
	}
	if err := ctx.Err(); err != nil {
		return l.quorumError(opExtend, lk.key, nil, err) // nothing sent
	}
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond // what the masters enforce
	if l.closed.Load() {
		return l.quorumError(opExtend, lk.key, nil, ErrClosed) // nothing sent
	}
	c := l.extendCall(opExtend, lk.v.extend, lk.head, ms)
	l.prepare(ctx, c.grant)
	start := l.clock.Now()
	lk.mu.Lock()
	until, ended := lk.until, lk.err
	var caps []time.Duration
	if ended == nil && start.Before(until) {
		caps = lk.capsLocked()
		lk.addUnknownLocked(ttl) // from here on, ours may land anywhere
		lk.longest = max(lk.longest, ttl)
		// Once sent, ours may land at any moment and set the masters' TTL
		// to ttl from then: whatever the outcome, the lock is guaranteed
		// no longer than start + ttl - drift, from now on, not only once
		// the Extend returns.
		lk.lowerUntilLocked(start.Add(ttl - clock.Drift(ttl, l.driftFactor)))
	}
	lk.mu.Unlock()
	if ended != nil {
		return fmt.Errorf("redlock: extend %q: %w", lk.key, errors.Join(ended, ErrLockLost))
	}
	if caps == nil {
		return fmt.Errorf("redlock: extend %q: validity passed at %v: %w", lk.key, until, ErrLockLost)
	}
	c.then = func(i int, v quorum.Vote) {
		if v.Err == nil { // it ran on master i: known from now on
			lk.mu.Lock()
			lk.resolveLocked(i, ttl)
			lk.mu.Unlock()
		}
	}
	res, err := l.fanOut(ctx, c)
	ok := err == nil && res.OK()
	kept := ttl
	if ok {
		kept = enforced(res, caps, ttl, l.quorum)
	}
	newUntil, valid := l.validity(kept, start)
	lk.moveUntil(newUntil, ok && valid)
	if ok && valid {
		return nil
	}
	qerr := l.quorumError(opExtend, lk.key, res, err)
	qerr.Late = ok // a quorum, but no validity left
	return qerr
}

// enforced is how long, from the Extend's start, a quorum of the masters
// that granted it keep the key: each granting master keeps it for ttl, or
// for the shortest earlier Extend that may still land there (caps[i]).
func enforced(res *quorum.Result, caps []time.Duration, ttl time.Duration, need int) time.Duration {
	kept := make([]time.Duration, 0, res.Yes)
	for i, v := range res.Votes {
		if res.Answered[i] && v.Yes {
			k := ttl
			if caps[i] > 0 {
				k = min(k, caps[i])
			}
			kept = append(kept, k)
		}
	}
	slices.Sort(kept)
	return kept[len(kept)-need] // the need-th longest
}

// moveUntil sets Until after an Extend: to until when the Extend succeeded,
// else to the earlier of until and the current one. It re-arms the expiry
// timer; an Until in the past ends the lock when the timer fires (at once).
func (lk *Lock) moveUntil(until time.Time, succeeded bool) {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	if !succeeded {
		lk.lowerUntilLocked(until)
		return
	}
	lk.setUntilLocked(until)
}

// lowerUntilLocked moves Until to until if that is earlier.
func (lk *Lock) lowerUntilLocked(until time.Time) {
	if until.Before(lk.until) {
		lk.setUntilLocked(until)
	}
}

// setUntilLocked sets Until and re-arms the expiry timer; an Until in the
// past ends the lock when the timer fires (at once).
func (lk *Lock) setUntilLocked(until time.Time) {
	lk.until = until
	if lk.expiry != nil && lk.err == nil {
		lk.expiry.Reset(lk.untilDelayLocked())
	}
}

// capsLocked returns, per master, the shortest TTL of this lock's extends
// whose outcome there is unknown (0 where there is none).
func (lk *Lock) capsLocked() []time.Duration {
	caps := make([]time.Duration, len(lk.l.masters))
	for i, ttls := range lk.unknown {
		for ttl := range ttls {
			if caps[i] == 0 || ttl < caps[i] {
				caps[i] = ttl
			}
		}
	}
	return caps
}

// addUnknownLocked records an extend with ttl as unknown on every master.
func (lk *Lock) addUnknownLocked(ttl time.Duration) {
	if lk.unknown == nil {
		lk.unknown = make([]map[time.Duration]int, len(lk.l.masters))
	}
	for i := range lk.unknown {
		if lk.unknown[i] == nil {
			lk.unknown[i] = make(map[time.Duration]int, 1)
		}
		lk.unknown[i][ttl]++
	}
}

// resolveLocked records that one extend with ttl got its answer on master i.
func (lk *Lock) resolveLocked(i int, ttl time.Duration) {
	if lk.unknown[i][ttl]--; lk.unknown[i][ttl] <= 0 {
		delete(lk.unknown[i], ttl)
	}
}
