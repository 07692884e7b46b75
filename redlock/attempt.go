package redlock

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
)

// attempt is one round of the Redlock algorithm. It also returns which
// masters' calls have returned, for clean-up that must not overtake them.
// st, if not nil, is where the attempt keeps its state; nil allocates it.
func (l *Locker) attempt(ctx context.Context, v *variant, key string, keys []string, token string, ttl time.Duration, st *attemptState) (*Lock, *acks, error) {
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond // what the masters enforce

	// Each node's acquire is acked as it returns (on the goroutine that
	// completes it, which must not block); a failed attempt's release of
	// a node goes out once both the outcome is decided and that node's
	// acquire returned, whichever comes last (acks.after): a release
	// (here, or the lock's Unlock) never overtakes its node's acquire.
	if st == nil {
		st = &attemptState{}
	}
	acks := st.acks.init(l.fifo)
	acquire := v.acquire(keys, token, ms) // its arguments serve every node
	start := l.clock.Now()
	res, err := quorum.Async(ctx, len(l.nodes), quorum.Options{
		Need:          l.quorum,
		Timeout:       l.nodeTimeout,
		Then:          acks.ack,
		ThenAtTimeout: true,
		Failed:        l.failed(opLock),
	}, func(ctx context.Context, i int, done quorum.Done) {
		l.send(ctx, acquire, i, done)
	})
	var fence int64
	if err == nil && res.OK() && v.fenced {
		fence, err = l.raiseFence(ctx, res, keys[len(keys)-1])
	}
	validity := ttl - l.clock.Now().Sub(start) - clock.Drift(ttl, l.driftFactor)
	if err == nil && res.OK() && validity > 0 {
		lk := &st.lock
		lk.init(l, v, key, keys, token, ttl, fence, start.Add(validity), acks)
		return lk, acks, nil
	}
	cleaned := acks.cleaning(len(l.nodes))
	for i := range l.nodes {
		acks.after(i, func(vote quorum.Vote) {
			if v.releases(vote) { // a failed call may have landed
				l.release(ctx, v, i, "", keys, token, cleaned) // announces nothing
				return
			}
			cleaned()
		})
	}
	qerr := l.quorumError(opLock, key, res, err)
	qerr.Late = err == nil && res.OK() // a quorum, but no validity left
	return nil, acks, qerr
}

// giveUp runs v's clean-up after the last failed attempt, whose acks make
// it wait for that attempt's calls on each master.
func (l *Locker) giveUp(ctx context.Context, v *variant, key string, keys []string, acks *acks) {
	if v.giveUp != nil {
		v.giveUp(context.WithoutCancel(ctx), l, key, keys, acks)
	}
}

// release sends v's release script to node i, announcing it on channel
// unless that is "", under a node timeout of its own that ctx's
// cancellation cannot cut short. It does not wait for the reply: it may run
// on the goroutine that completed node i's acquire. done, if not nil, runs
// once the release returned.
func (l *Locker) release(ctx context.Context, v *variant, i int, channel string, keys []string, token string, done func()) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
	l.send(rctx, v.release.with(keys, v.releaseArgs(channel, token)...), i, voteFunc(func(i int, vote quorum.Vote) {
		cancel()
		l.observeLater(opRelease, i, vote)
		if done != nil {
			done()
		}
	}))
}
