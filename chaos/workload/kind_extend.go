package workload

import (
	"context"
	"time"
)

// extend takes a lock (renewed or not), then extends it with random TTLs,
// shorter and longer than its own, two at a time now and then, sampling the
// masters after each; after a failed Extend it waits for late commands to
// land and samples again. Its context (Lock.Context) is watched, and now
// and then the holder works on until it ends: it must end by the Until
// that the Extends left (checker.ContextWithinUntil).
func (s *step) extend(ctx context.Context) error {
	renew := s.chance(0.5)
	l, o, err := s.c.watched(!renew, renew)
	if err != nil {
		return err
	}
	h, err := s.plainLock(ctx, l, s.key(Extend), s.cfg.TTL)
	if err != nil {
		return harness(err)
	}
	lctx, stop := s.c.watch(h, o)
	s.c.env.sample(s.bg, h)
	ttl := func() time.Duration { return s.ttl(s.cfg.TTL/4, 3*s.cfg.TTL) }
	for range 1 + s.rng.IntN(3) {
		if h.Lock.Err() != nil {
			break
		}
		if s.chance(0.3) {
			a, b := ttl(), ttl()
			done := make(chan struct{})
			go func() {
				defer close(done)
				h.Lock.Extend(s.bg, b)
			}()
			h.Lock.Extend(s.bg, a)
			<-done
			h.noteUntil()
		} else {
			ctx, cancel := context.WithTimeout(s.bg, ReleaseTimeout)
			if s.chance(pEnded) {
				ctx = ended
			}
			err := h.Lock.Extend(ctx, ttl())
			cancel()
			h.noteUntil()
			if err != nil {
				s.c.env.sample(s.bg, h)
				time.Sleep(s.cfg.LateBy)
			}
		}
		s.c.env.sample(s.bg, h)
		time.Sleep(s.between(0, s.cfg.Hold))
	}
	if s.chance(pUntilEnd) {
		s.c.untilEnd(h, lctx, 3*s.cfg.TTL)
	}
	stop()
	h.Write()
	s.release(h)
	return nil
}

// pUntilEnd is the probability that an Extend holder works on until its
// lock's context ends.
const pUntilEnd = 0.3
