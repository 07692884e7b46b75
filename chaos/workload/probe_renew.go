package workload

import (
	"context"
	"fmt"
	"sync"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
)

// renewHeldTTL is the TTL of the RenewHeld probe's locks, which run for
// renewHeldFor, renewed every third of it.
const (
	renewHeldTTL = 2 * NodeTimeout
	renewHeldFor = 2 * renewHeldTTL
)

// renewHeld runs, at once, an AutoRenew lock of client A and a Locker.Do
// of client B, each for two TTLs: on healthy masters neither may be
// lost. Then it runs both again and cuts each client's links once it
// holds: the renewals fail, and each context (Lock.Context, Do's
// function's) must end by the lock's Until.
func (p *prober) renewHeld(ctx context.Context) error {
	for _, cut := range []bool{false, true} {
		var (
			wg   sync.WaitGroup
			errs [2]error
		)
		wg.Go(func() { errs[0] = p.renewedLock(ctx, p.name+"-lock", cut) })
		wg.Go(func() { errs[1] = p.renewedDo(ctx, p.name+"-do", cut) })
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// renewedLock has client A hold an AutoRenew lock of name for two TTLs,
// or, when cut is set, cut its links once it holds and work on until the
// lock's context ends.
func (p *prober) renewedLock(ctx context.Context, name string, cut bool) error {
	c := p.a
	key := p.e.Key(name)
	l, o, err := c.watched(false, true)
	if err != nil {
		return err
	}
	h, err := c.record(checker.Event{Key: name, Renewed: true, TTL: renewHeldTTL}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return l.TryLock(ctx, key, renewHeldTTL) })
	if err != nil {
		return harness(err)
	}
	lctx, stop := c.watch(h, o)
	if cut {
		if err := p.links(ctx, c, fault.Cut, 0); err != nil {
			return err
		}
		c.untilEnd(h, lctx, renewHeldFor)
		if err := p.heal(ctx, c); err != nil {
			return err
		}
	} else {
		c.workUntil(ctx, h, lctx, renewHeldFor, renewHeldTTL/4)
	}
	stop()
	p.unlock(ctx, h, fmt.Sprintf("unlock of a renewed lock (links cut: %t)", cut))
	return nil
}

// renewedDo has client B run a Locker.Do of name for two TTLs, or, when
// cut is set, cut its links once the function runs and work on until its
// context ends.
func (p *prober) renewedDo(ctx context.Context, name string, cut bool) error {
	c := p.b
	dctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	defer cancel()
	var ferr error
	err := c.doWith(dctx, name, renewHeldTTL, renewHeldFor, func() {
		if cut {
			ferr = p.links(ctx, c, fault.Cut, 0)
		}
	})
	if cut {
		if herr := p.heal(ctx, c); herr != nil && ferr == nil {
			ferr = herr
		}
	}
	if ferr != nil {
		return ferr
	}
	return harness(err)
}

// extendContext has client A take a lock for probeTTL, watch its context,
// and extend it by a much shorter TTL: the Extend lowers its Until, and
// the context must end by that Until, not the first one.
func (p *prober) extendContext(ctx context.Context) error {
	key := p.e.Key(p.name)
	l, o, err := p.a.watched(false, false)
	if err != nil {
		return err
	}
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return l.TryLock(ctx, key, probeTTL) })
	if err != nil {
		return harness(err)
	}
	lctx, stop := p.a.watch(h, o)
	xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	h.Lock.Extend(xctx, staleTTL)
	cancel()
	h.noteUntil()
	p.a.untilEnd(h, lctx, probeTTL)
	stop()
	p.unlock(ctx, h, "unlock of a lock extended by a shorter TTL")
	return nil
}
