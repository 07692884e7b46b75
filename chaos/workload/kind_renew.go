package workload

import (
	"context"
	"errors"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// The Renew kind: AutoRenew locks and Locker.Do, held past the TTL. Their
// holds are recorded Renewed: a renewed hold must not be lost while its
// renewal gets through (checker.RenewalHolds). Their contexts (Lock.Context,
// Do's function's) are watched: each must end no later than the lock's
// Until as every renewal moved it (checker.ContextWithinUntil). The
// client's observer notes each renewal of a watched hold.

// renew holds past the TTL, kept by the renewal: an AutoRenew lock, or
// Locker.Do.
func (s *step) renew(ctx context.Context) error {
	name := s.key(Renew)
	d := s.between(s.cfg.TTL/2, 2*s.cfg.TTL+s.cfg.TTL/2)
	if s.chance(pDo) {
		return s.do(ctx, name, d)
	}
	key := s.c.env.Key(name)
	l, o, err := s.c.watched(false, true)
	if err != nil {
		return err
	}
	lock := l.Lock
	if s.chance(pTry) {
		lock = l.TryLock
	}
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	h, err := s.c.record(checker.Event{Key: name, Renewed: true, TTL: s.cfg.TTL}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return lock(actx, key, s.cfg.TTL) })
	if err != nil {
		return harness(err)
	}
	lctx, stop := s.c.watch(h, o)
	s.c.env.sample(s.bg, h)
	s.c.workUntil(s.bg, h, lctx, d, s.cfg.TTL/4)
	stop()
	h.Write()
	s.release(h)
	return nil
}

// do holds name for d under Locker.Do. The hold begins when fn starts and
// ends when fn returns or its context ends, whichever comes first (the
// moment Do says the lock can no longer be guaranteed). Do hides its Lock:
// the hold's Until is at most TTL after fn started (the grant came before),
// and each renewal moves it (the observer notes them).
func (s *step) do(ctx context.Context, name string, d time.Duration) error {
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	return harness(s.c.do(actx, name, s.cfg.TTL, d))
}

// do holds name for d under Locker.Do with ttl (see step.do), and
// returns Do's error.
func (c *Client) do(ctx context.Context, name string, ttl, d time.Duration) error {
	return c.doWith(ctx, name, ttl, d, nil)
}

// doWith is do; started, if set, runs when the function starts.
func (c *Client) doWith(ctx context.Context, name string, ttl, d time.Duration, started func()) error {
	e := c.env
	key := e.Key(name)
	l, o, err := c.watched(false, true)
	if err != nil {
		return err
	}
	e.attempts.Add(1)
	ev := checker.Event{Key: name, Client: c.ID, Renewed: true, TTL: ttl}
	start := time.Now()
	ran := false
	err = l.Do(ctx, key, ttl, func(fctx context.Context) error {
		ran = true
		now := time.Now()
		id := e.History.GrantCall(ev, start, now, now.Add(ttl))
		o.bind(id)
		stop := c.watchCtx(id, fctx)
		if started != nil {
			started()
		}
		select {
		case <-time.After(d):
		case <-fctx.Done():
		}
		e.History.Release(id, stop())
		return nil
	})
	if !ran {
		e.History.Attempt(ev, start, time.Now(), Outcome(err))
	}
	return err
}

// watch binds o, the observer of the Locker h was taken with (watched),
// to h, and notes the end of h's context, Lock.Context (see watchCtx),
// which it returns. stop, called before h is released, notes the context
// as live then if it still is.
func (c *Client) watch(h *Held, o *holdObserver) (ctx context.Context, stop func()) {
	o.bind(h.ID)
	lctx, cancel := h.Lock.Context(context.Background())
	end := c.watchCtx(h.ID, lctx)
	return lctx, func() {
		end()
		cancel()
	}
}

// watchCtx notes when ctx, the context of lock id, ends: CtxLive then,
// and Lost if it ended because the lock can no longer be guaranteed. stop
// notes ctx as live now if it still is, stops watching, and returns when
// ctx ended (or now).
//
// stop may win the race with ctx's end: a context closes its Done channel
// before it runs its AfterFuncs, so a holder that saw Done and stops at
// once can stop the AfterFunc of an ended context. stop then notes the end
// itself (Lost included), or the loss would go unrecorded.
func (c *Client) watchCtx(id int64, ctx context.Context) (stop func() time.Time) {
	h := c.env.History
	note := func() time.Time {
		now := time.Now()
		h.CtxLive(id, now)
		if ctx.Err() != nil && errors.Is(context.Cause(ctx), redlock.ErrLockLost) {
			h.Lose(id, now)
		}
		return now
	}
	ended := make(chan time.Time, 1)
	stopAfter := context.AfterFunc(ctx, func() { ended <- note() })
	return func() time.Time {
		if stopAfter() {
			return note()
		}
		return <-ended
	}
}

// workUntil holds h for d or until lctx (its context) ends, noting its
// Until and sampling the masters every every. It never asks the lock
// whether it still holds (Lock.Err ends a lock whose Until passed, which
// would hide a context that outlives its Until). bg bounds the samples.
func (c *Client) workUntil(bg context.Context, h *Held, lctx context.Context, d, every time.Duration) {
	every = max(every, time.Millisecond)
	for end := time.Now().Add(d); time.Now().Before(end); {
		select {
		case <-lctx.Done():
			h.noteUntil()
			return
		case <-time.After(min(every, time.Until(end))):
		}
		h.noteUntil()
		c.env.sample(bg, h)
	}
}

// untilEnd has the holder of h work on until lctx, its context, ends: it
// must end by the lock's Until. It gives up waiting 3 ContextTolerances
// past the Until (ContextWithinUntil reports that), or after limit.
func (c *Client) untilEnd(h *Held, lctx context.Context, limit time.Duration) {
	const late = 3 * checker.ContextTolerance
	for end := time.Now().Add(limit); time.Now().Before(end); {
		wait := min(time.Until(h.Lock.Until())+late, time.Until(end))
		select {
		case <-lctx.Done():
			return
		case <-time.After(max(wait, time.Millisecond)):
		}
		if time.Now().After(h.Lock.Until().Add(late)) {
			return
		}
	}
}
