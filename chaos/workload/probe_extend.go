package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/redlock"
)

// extendsInOrder is the ExtendsInOrder probe. Two Extends of one lock
// overlap: a long one, whose replies a fault holds back for half a node
// timeout (it still succeeds), and, once the masters applied it, a short
// one. The masters then enforce the short TTL; the long Extend's answer,
// which comes last, must not raise Until past it (checker.UntilWithinExpiry,
// sampled once both returned). Extends of one Lock run one at a time, so
// the short one waits for the long one; were they to run at once, the
// short one would be decided first. The lock reaches the masters over
// Pooled nodes made for the probe on client A's links (a connection per
// concurrent call): the short Extend's replies come back on connections
// of their own, which the fault does not hold, whatever the scheduler
// does.
func (p *prober) extendsInOrder(ctx context.Context) error {
	var nodes []redlock.Node
	d := &dialer{transport: Pooled, password: p.e.Cluster.Password()}
	for _, addr := range p.e.Net.Addrs(p.a.ID) {
		mn, err := d.dial(addr)
		if err != nil {
			return fmt.Errorf("extends-in-order: %w", err)
		}
		defer mn.close()
		nodes = append(nodes, mn.node)
	}
	l, err := redlock.New(nodes, p.a.cfg)
	if err != nil {
		return fmt.Errorf("extends-in-order: %w", err)
	}
	key := p.e.Key(p.name)
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return l.TryLock(ctx, key, probeTTL) })
	if err != nil {
		return harness(err)
	}
	defer p.unlock(ctx, h, "unlock after two Extends at once")
	// The connection each master granted on is back in its pool: the long
	// Extend takes it, the short one dials another.
	if err := p.links(ctx, p.a, fault.DelayReplies, NodeTimeout/2); err != nil {
		return err
	}
	const long, short = 2 * probeTTL, probeTTL / 4
	var wg sync.WaitGroup
	wg.Go(func() {
		xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
		defer cancel()
		h.Lock.Extend(xctx, long)
	})
	// The masters apply the long Extend before the short one is sent.
	for deadline := time.Now().Add(SettleWithin); ; time.Sleep(time.Millisecond) {
		n := 0
		for _, r := range p.e.direct.read(ctx, h.target) {
			if r.known && r.held && r.left > probeTTL {
				n++
			}
		}
		if n == len(nodes) || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
	}
	xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
	h.Lock.Extend(xctx, short)
	cancel()
	wg.Wait()
	h.noteUntil()
	if err := p.heal(ctx, p.a); err != nil {
		return err
	}
	p.e.sample(ctx, h)
	return nil
}
