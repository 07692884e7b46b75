package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
)

// fairOrder has client A hold a fair lock while three waiters queue up
// behind it, each starting once the one before was seen registered (the
// key's gate orders them): a waiter of client B that will crash, one of B,
// one of A. Then B's links are slowed, so that A's waiter, the last in
// line, is the first to try whenever the lock looks free; the first waiter
// crashes; A unlocks. The second and the third must be served in that
// order (checker.OutOfOrder), the lock must not lie free longer than the
// crashed waiter's registration (NoStarvation), and that registration
// must be gone once its lifetime passed.
func (p *prober) fairOrder(ctx context.Context) error {
	holder := p.a.fairHold(ctx, ctx, p.name, true, probeTTL)
	if holder.err != nil {
		return harness(holder.err)
	}
	crashL, obs, crash, err := p.b.crashable()
	if err != nil {
		return fmt.Errorf("workload: a crashable Locker: %w", err)
	}
	wctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	defer cancel()
	crashCtx, crashCancel := context.WithCancel(wctx)
	defer crashCancel()
	waiters := []struct {
		c   *Client
		l   *redlock.Locker
		ctx context.Context
	}{{p.b, crashL, crashCtx}, {p.b, p.b.Locker, wctx}, {p.a, p.a.plain, wctx}}
	results := make([]fairResult, len(waiters))
	starts := make([]time.Time, len(waiters))
	var wg sync.WaitGroup
	placed := make(chan struct{}) // the last waiter's place in line is known
	for i, w := range waiters {
		started := make(chan struct{})
		wg.Go(func() {
			hooks := fairHooks{started: func(t time.Time) {
				starts[i] = t
				close(started)
			}}
			if i == len(waiters)-1 {
				hooks.placed = func() { close(placed) }
			}
			r := w.c.fairWith(w.ctx, ctx, w.l, p.name, false, time.Second, hooks)
			results[i] = r
			if r.err == nil && i > 0 {
				p.unlock(ctx, r.h, fmt.Sprintf("unlock of fair waiter %d", i))
				w.c.registrationGone(ctx, p.name, r, fmt.Sprintf("the unlock of fair waiter %d", i))
			}
		})
		<-started
	}
	<-placed
	if err := p.links(ctx, p.b, fault.Slow, fairOrderLag); err != nil {
		return err
	}
	crash()
	crashed := time.Now()
	p.e.History.Crash(p.b.ID, p.name, starts[0], crashed)
	crashCancel()
	p.unlock(ctx, holder.h, "unlock of the fair lock three waiters queued for")
	p.a.registrationGone(ctx, p.name, holder, "the unlock of the fair lock three waiters queued for")
	wg.Wait()
	if err := p.heal(ctx, p.b); err != nil {
		return err
	}
	if results[0].waiter != "" {
		p.e.pending.Add(1)
		go func() {
			defer p.e.pending.Done()
			p.b.crashedRegistration(ctx, p.name, results[0], crashed, obs)
		}()
	}
	return nil
}

// fairOrderLag is how much later than A's waiter B's reaches the masters
// in fair-order.
const fairOrderLag = 30 * time.Millisecond
