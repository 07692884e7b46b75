package redlock

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
)

// attempt is one round of the Redlock algorithm. It also returns which
// masters' calls have returned, for clean-up that must not overtake them.
func (l *Locker) attempt(ctx context.Context, v *variant, key string, keys []string, token string, ttl time.Duration) (*Lock, *acks, error) {
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond // what the masters enforce

	// Each node's goroutine marks its acquire as returned, then waits for
	// the decision and releases the node if the attempt failed: a release
	// (here, or the lock's Unlock) never overtakes its node's acquire.
	decided := make(chan struct{})
	var failed bool // written before decided is closed
	acks := newAcks(len(l.nodes))

	acquire := v.acquire(keys, token, ms) // its arguments serve every node
	start := l.clock.Now()
	res, err := quorum.Do(ctx, len(l.nodes), quorum.Options{
		Need:    l.quorum,
		Timeout: l.nodeTimeout,
		Then: func(i int, vote quorum.Vote) {
			acks.ack(i, vote.Yes)
			<-decided
			if failed && v.releases(vote) { // a failed call may have landed
				l.release(ctx, v, i, "", keys, token) // announces nothing
			}
		},
	}, func(ctx context.Context, i int) quorum.Vote {
		return l.observe(opLock, i, acquire(ctx, l.nodes[i]))
	})
	var fence int64
	if err == nil && res.OK() && v.fenced {
		fence, err = l.raiseFence(ctx, res, keys[len(keys)-1])
	}
	validity := ttl - l.clock.Now().Sub(start) - clock.Drift(ttl, l.driftFactor)
	if err == nil && res.OK() && validity > 0 {
		close(decided)
		return newLock(l, v, key, keys, token, ttl, fence, start.Add(validity), acks), acks, nil
	}
	failed = true
	close(decided)
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

// release runs v's release script on node i, announcing it on channel
// unless that is "", under a context that ctx's cancellation cannot cut
// short.
func (l *Locker) release(ctx context.Context, v *variant, i int, channel string, keys []string, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
	defer cancel()
	l.observe(opRelease, i, v.release.with(keys, v.releaseArgs(channel, token)...).count(rctx, l.nodes[i]))
}
