package redlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/clock"
)

// Check asks the masters whether they still hold the lock, and for how
// long, without extending it: a quorum read that changes nothing on the
// masters and leaves Until, Done and any renewal as they are. It returns
// how long from now a quorum of the masters is sure to keep the lock:
// the shortest remaining TTL among the first quorum of masters that hold
// it (a master that does not hold it answers 0), less the clock drift for
// that TTL and the time the read took. Unlike Until, which the holder's
// own clock keeps, it is what the masters say now; act on the resource
// only before the earlier of the two.
//
// When fewer than a quorum hold the lock (it expired, was released or is
// held by another), or when too few answered, the error matches
// ErrLockLost and is a *QuorumError (Op "check"), with ErrUnavailable
// beside it when the masters did not answer. A lock that already ended
// (Unlock, a loss) is not asked: the error matches ErrLockLost.
func (lk *Lock) Check(ctx context.Context) (time.Duration, error) {
	l := lk.l
	if err := l.checkMade(); err != nil {
		return 0, err
	}
	if ctx == nil {
		return 0, invalid("nil context")
	}
	if err := ctx.Err(); err != nil {
		return 0, l.quorumError(opCheck, lk.key, nil, err) // nothing sent
	}
	if l.closed.Load() {
		return 0, l.quorumError(opCheck, lk.key, nil, ErrClosed)
	}
	lk.mu.Lock()
	ended := lk.err
	lk.mu.Unlock()
	if ended != nil {
		return 0, fmt.Errorf("redlock: check %q: %w", lk.key, errors.Join(ended, ErrLockLost))
	}
	c := l.headCall(opCheck, lk.v.check, lk.head)
	start := l.clock.Now()
	res, err := l.fanOut(ctx, c)
	if err == nil && res.OK() {
		var least int64 = -1
		for i, v := range res.Votes {
			if ms, _ := v.Value.(int64); res.Answered[i] && v.Yes && (least < 0 || ms < least) {
				least = ms
			}
		}
		left := time.Duration(least) * time.Millisecond
		if valid := left - clock.Drift(left, l.driftFactor) - l.clock.Now().Sub(start); valid > 0 {
			return valid, nil
		}
	}
	qerr := l.quorumError(opCheck, lk.key, res, err)
	qerr.Late = err == nil && res.OK() // a quorum holds it, for no longer than the read took
	return 0, qerr
}
