package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// A retried job reuses its reentrant owner id: the job takes a hold as
// owner o, stalls past the hold's validity (the hold expires on the
// masters), and is retried under the same id, on another client now and
// then, which acquires afresh. Then the stalled job comes back and unlocks
// its expired hold. That stale Unlock must not count down the new hold:
// the new hold is sampled (until-within-expiry) and another owner tries the
// lock (an overlap if granted).

// pRetried is the probability that a reentrant cycle is a retried job.
const pRetried = 0.2

// retried does one retried job (see above).
func (s *step) retried(ctx context.Context) error {
	name := s.key(Reentrant)
	key := s.c.env.Key(name)
	s.c.owners++
	owner := fmt.Sprintf("c%d.%d", s.c.ID, s.c.owners)
	t := target{mode: modeHash, key: key, member: owner}
	ev := checker.Event{Key: name, Owner: owner}
	lock := func(c *Client, ttl time.Duration, try bool) (*Held, error) {
		actx, cancel := s.acquireCtx(ctx)
		defer cancel()
		r := c.Locker.Reentrant(key, owner)
		l := r.Lock
		if try {
			l = r.TryLock
		}
		return c.record(ev, t, func() (*redlock.Lock, error) { return l(actx, ttl) })
	}
	stale, err := lock(s.c, s.cfg.TTL, s.chance(pTry))
	if err != nil {
		return harness(err)
	}
	s.c.env.sample(s.bg, stale)
	s.c.expired(s.bg, stale)
	retry := s.c // the retried job runs on another client now and then
	if n := len(s.c.env.clients); n > 1 && s.chance(0.5) {
		retry = s.c.env.clients[(s.c.ID+1+s.rng.IntN(n-1))%n]
	}
	fresh, err := lock(retry, 2*s.cfg.TTL, false)
	// The stalled job comes back and unlocks its expired hold.
	rctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
	stale.releaseWith(rctx)
	cancel()
	if err != nil {
		return harness(err)
	}
	s.c.env.sample(s.bg, fresh)
	if err := s.otherOwner(ctx, name, owner+"-other"); err != nil {
		return err
	}
	s.work(fresh, s.between(0, s.cfg.TTL/2))
	fresh.Write()
	s.release(fresh)
	return nil
}

// expired waits until h's Until passed and no master that answers holds
// its target any more (it expired there), for up to its TTL past its
// Until and SettleWithin.
func (c *Client) expired(ctx context.Context, h *Held) {
	until := h.Lock.Until()
	time.Sleep(time.Until(until))
	for deadline := until.Add(SettleWithin); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(10 * time.Millisecond) {
		if holding(c.env.direct.read(ctx, h.target)) == 0 {
			return
		}
	}
}

// otherOwner has client s.c try the reentrant lock named name as owner,
// once; a grant (recorded, and released) is an overlap when the lock is
// held by another owner.
func (s *step) otherOwner(ctx context.Context, name, owner string) error {
	key := s.c.env.Key(name)
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	h, err := s.c.record(checker.Event{Key: name, Owner: owner}, target{mode: modeHash, key: key, member: owner},
		func() (*redlock.Lock, error) { return s.c.Locker.Reentrant(key, owner).TryLock(actx, s.cfg.TTL) })
	if err != nil {
		return harness(err)
	}
	s.release(h)
	return nil
}
