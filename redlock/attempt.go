package redlock

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
)

// attempt is one attempt of the Redlock algorithm: one round of v's acquire
// with token. A failed attempt is released at once on every master whose
// acquire may have landed (or may still: tombstones keep a late one from
// landing after its release); cleaned closes once those releases returned.
// Nothing is sent when ctx has ended.
func (l *Locker) attempt(ctx context.Context, v *variant, key string, keys []string, token string, ttl time.Duration) (lk *Lock, cleaned <-chan struct{}, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, l.quorumError(opLock, key, nil, err)
	}
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond // what the masters enforce
	var counter string
	if v.fenced {
		counter = keys[len(keys)-1]
	}
	c := l.acquireCall(v, keys, token, ms)
	res, start, fence, err := l.round(ctx, c, counter, ms)
	if until, valid := l.validity(ttl, start); err == nil && res.OK() && valid {
		return newLock(l, v, key, keys, c.head(keys), token, ttl, fence, until), nil, nil
	}
	release := l.releaseCall(opRelease, v, v.release, c.head(keys), "", ttl) // announces nothing
	cleaned = l.sendAll(ctx, release, func(i int) bool { return unsettled(res.Votes[i], res.Answered[i]) })
	qerr := l.quorumError(opLock, key, res, err)
	qerr.Late = err == nil && res.OK() // a quorum, but no validity left
	return nil, cleaned, qerr
}

// round is what an attempt and a Resume share: c, a grant, on every
// master (once the restart guard is ready for it: prepare), and, when
// counter is not "", the fencing token written back to the quorum that
// granted it (for ms). It returns the votes, when the round started (validity
// counts from there) and the fencing token.
func (l *Locker) round(ctx context.Context, c *call, counter string, ms int64) (res *quorum.Result, start time.Time, fence int64, err error) {
	l.prepare(ctx, c.grant)
	start = l.clock.Now()
	res, err = l.fanOut(ctx, c)
	if err == nil && res.OK() && counter != "" {
		fence, err = l.raiseFence(ctx, res, counter, ms)
	}
	return res, start, fence, err
}

// validity is the outcome of a round (an attempt, an Extend, a Resume)
// that started at start and set ttl on its quorum: the lock is guaranteed
// until start + ttl - drift (every master set its TTL after start), and
// the round succeeded only if some of that is left now, ttl - elapsed -
// drift > 0. Elapsed counts once: in whether the round succeeded, not
// again in Until. It is the only place the formula lives.
func (l *Locker) validity(ttl time.Duration, start time.Time) (until time.Time, valid bool) {
	drift := clock.Drift(ttl, l.driftFactor)
	return start.Add(ttl - drift), ttl-l.clock.Now().Sub(start)-drift > 0
}
