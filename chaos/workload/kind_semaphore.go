package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
)

// A semaphore's holds are recorded Shared (they may overlap each other)
// with its Permits, and the checker's AtMostPermits counts them: at no
// instant more than Permits. Each hold's state on the masters is its
// permit's lock key, "{key}:permit:i" (Lock.Permit), a string holding the
// token, sampled and settled as a plain lock's key is.

// semaphorePermits is the K of the workload's semaphore key n: 2 for even
// n, 3 for odd n.
func semaphorePermits(n int) int { return 2 + n%2 }

// pSemExtend is the probability that a semaphore holder extends its permit.
const pSemExtend = 0.3

// semaphoreHold acquires a permit of the semaphore named name (key on the
// masters) with k permits, by Acquire, or TryAcquire when try is set, and
// records the call. opts are the acquire's (WithMetadata: the permit
// keeps a holder record of its own).
func (c *Client) semaphoreHold(ctx context.Context, name string, k int, try bool, ttl time.Duration, opts ...redlock.Option) (*Held, error) {
	key := c.env.Key(name)
	sem := c.Locker.Semaphore(key, k)
	acquire := sem.Acquire
	if try {
		acquire = sem.TryAcquire
	}
	h, err := c.record(checker.Event{Key: name, Shared: true, Permits: k}, target{mode: modeString},
		func() (*redlock.Lock, error) { return acquire(ctx, ttl, opts...) })
	if err != nil {
		return nil, err
	}
	h.target.key = fmt.Sprintf("{%s}:permit:%d", key, h.Lock.Permit())
	return h.withRecord(recordOf(h.target.key, holderKey(h.target.key), h.Lock.Token(), false), len(opts) > 0), nil
}

// semaphore takes a permit, holds it long enough (up to a quarter of the
// TTL) that more than K clients often want the semaphore at once, extends
// it now and then, samples the masters, and releases it.
func (s *step) semaphore(ctx context.Context) error {
	n := s.rng.IntN(s.cfg.Keys)
	opts := s.metadata()
	actx, cancel := s.acquireCtx(ctx)
	h, err := s.c.semaphoreHold(actx, Semaphore.name(n), semaphorePermits(n), s.chance(pTry), s.cfg.TTL, opts...)
	cancel()
	if err != nil {
		return harness(err)
	}
	s.c.env.sample(s.bg, h)
	if s.chance(pSemExtend) {
		s.extendOnce(h, s.ttl(s.cfg.TTL/2, 2*s.cfg.TTL))
		s.c.env.sample(s.bg, h)
	}
	s.work(h, s.between(0, s.cfg.TTL/4))
	s.release(h)
	return nil
}

// semaphoreTries is how often the SemaphoreFull probe tries a full
// semaphore: each try starts at a random permit.
const semaphoreTries = 8

// semaphoreFull fills a semaphore of two permits with a hold of client A
// and one of client B, then has A try it again and again, half of the
// tries with its links to a minority of the masters cut: every try must be
// refused. Then B releases, and A must get in.
func (p *prober) semaphoreFull(ctx context.Context) error {
	const k = 2
	hold := func(c *Client, try bool, ttl time.Duration) (*Held, error) {
		actx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
		defer cancel()
		return c.semaphoreHold(actx, p.name, k, try, ttl)
	}
	first, err := hold(p.a, false, probeTTL)
	if err != nil {
		return harness(err)
	}
	defer p.unlock(ctx, first, "unlock of the first permit")
	second, err := hold(p.b, false, probeTTL)
	if err != nil {
		return harness(err)
	}
	minority := make([]int, len(p.e.nodes[p.a.ID])-p.e.quorum)
	for i := range minority {
		minority[i] = i
	}
	for i := range semaphoreTries {
		if i == semaphoreTries/2 {
			if err := p.links(ctx, p.a, fault.Cut, 0, minority...); err != nil {
				return err
			}
		}
		if h, err := hold(p.a, true, time.Second); err == nil {
			p.unlock(ctx, h, "unlock of a permit granted beyond K")
		} else if herr := harness(err); herr != nil {
			return herr
		}
	}
	if err := p.heal(ctx, p.a); err != nil {
		return err
	}
	p.unlock(ctx, second, "unlock of the second permit")
	h, err := hold(p.a, false, time.Second)
	if err != nil {
		return harness(err)
	}
	p.unlock(ctx, h, "unlock of the permit freed by the second")
	return nil
}
