package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// The probes of reused identities: a reentrant owner id reused by a
// retried job, and a token handed over while its giver still runs.

// staleTTL is the TTL of a hold that the probes let expire: short, but
// longer than the node timeout.
const staleTTL = 3 * NodeTimeout

func (p *prober) retriedOwner(ctx context.Context) error {
	key := p.e.Key(p.name)
	owner := p.name + "-job"
	lock := func(c *Client, owner string, ttl time.Duration) (*Held, error) {
		return c.record(checker.Event{Key: p.name, Owner: owner}, target{mode: modeHash, key: key, member: owner},
			func() (*redlock.Lock, error) { return c.Locker.Reentrant(key, owner).TryLock(ctx, ttl) })
	}
	stale, err := lock(p.a, owner, staleTTL)
	if err != nil {
		return harness(err)
	}
	p.a.expired(ctx, stale) // the job stalls past its hold
	fresh, err := lock(p.b, owner, probeTTL)
	rctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	stale.releaseWith(rctx) // the stalled job's Unlock comes late
	cancel()
	if err != nil {
		return harness(err)
	}
	p.e.sample(ctx, fresh)
	if h, err := lock(p.a, owner+"-other", time.Second); err == nil {
		p.unlock(ctx, h, "unlock of another owner's hold granted beside a retried job's")
	} else if herr := harness(err); herr != nil {
		return herr
	}
	p.unlock(ctx, fresh, "unlock of a retried job's hold")
	return nil
}

func (p *prober) giverLate(ctx context.Context) error {
	key := p.e.Key(p.name)
	try := func(c *Client) (*Held, error) {
		return p.acquire(c, func() (*redlock.Lock, error) { return c.plain.TryLock(ctx, key, probeTTL) })
	}
	given, err := try(p.a)
	if err != nil {
		return harness(err)
	}
	handover := time.Now()
	p.e.History.Release(given.ID, handover)
	taken, err := p.acquire(p.b, func() (*redlock.Lock, error) { return p.b.plain.Resume(ctx, key, given.Lock.Token(), probeTTL) })
	if err != nil {
		return harness(err)
	}
	p.unlock(ctx, taken, "unlock of a lock taken over by its token")
	next, err := try(p.b)
	if err != nil {
		return harness(err)
	}
	// The giver comes back: it unlocks, then extends, its stale Lock.
	rctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	given.Lock.Unlock(rctx)
	cancel()
	p.e.sample(ctx, next)
	xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	given.Lock.Extend(xctx, probeTTL)
	cancel()
	p.e.sample(ctx, next)
	p.a.remains(ctx, p.name, given.target, fmt.Sprintf("the late Unlock and Extend of lock %d by its giver", given.ID),
		handover, time.Now().Add(SettleWithin), p.b)
	p.unlock(ctx, next, "unlock of the lock taken after a hand-over")
	return nil
}
