package workload

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// extendsInOrder is the ExtendsInOrder probe. Two Extends of one lock
// overlap: a long one, and, once every master applied it, a short one.
// The masters then enforce the short TTL; the long Extend's answer must
// not raise Until past it (checker.UntilWithinExpiry, sampled once both
// returned). Extends of one Lock run one at a time, so the short one
// waits for the long one; were they to run at once, the short one would
// be decided first, and the long one would raise Until last.
//
// The order is established by what the probe observes, not by a delay:
// the long Extend's replies are held back at the client's edge
// (replyHold) from the moment each master answered until the probe
// releases them. The probe waits until every master answered the long
// Extend (a master answers once it ran the command), then calls the short
// one, which reaches every master after the long one. If its commands go
// out while the long one's replies are held (they ran at once), the probe
// releases them only once the short Extend returned: the long one is
// decided last, every time. If none has gone out after extendsQueued (it
// waits for the long one, as it must), the probe releases them, and the
// short Extend runs after the long one returned. The lock reaches the
// masters over Pooled nodes made for the probe on client A's links; no
// fault of the proxies is needed.
//
// The probe's Locker has a node timeout of extendsNodeTimeout, so that
// the long Extend's fan-out still counts its replies after the short
// one's round trip. A long Extend that failed all the same (its replies
// later than that, on a stalled machine) decided nothing about the
// order; the probe then tries again, with a fresh hold, up to
// extendsAttempts times.
func (p *prober) extendsInOrder(ctx context.Context) error {
	var inner []redlock.Node
	d := &dialer{transport: Pooled, password: p.e.Cluster.Password()}
	for _, addr := range p.e.Net.Addrs(p.a.ID) {
		mn, err := d.dial(addr)
		if err != nil {
			return fmt.Errorf("extends-in-order: %w", err)
		}
		defer mn.close()
		inner = append(inner, mn.node)
	}
	for range extendsAttempts {
		decided, err := p.extendsAtOnce(ctx, inner)
		if err != nil || decided || ctx.Err() != nil {
			return err
		}
	}
	return nil
}

// extendsAtOnce is one try of the extends-in-order probe over the nodes
// inner. It reports whether the long Extend succeeded: only then did the
// try decide in which order the two Extends were decided.
func (p *prober) extendsAtOnce(ctx context.Context, inner []redlock.Node) (decided bool, _ error) {
	hold := newReplyHold(len(inner))
	nodes := make([]redlock.Node, len(inner))
	for i, n := range inner {
		nodes[i] = holdNode{Node: n, hold: hold}
	}
	cfg := p.a.cfg
	cfg.NodeTimeout, cfg.AutoRenew = extendsNodeTimeout, false
	l, err := redlock.New(nodes, cfg)
	if err != nil {
		return false, fmt.Errorf("extends-in-order: %w", err)
	}
	key := p.e.Key(p.name)
	h, err := p.acquire(p.a, func() (*redlock.Lock, error) { return l.TryLock(ctx, key, probeTTL) })
	if err != nil {
		return false, harness(err)
	}
	defer p.unlock(ctx, h, "unlock after two Extends at once")
	const long, short = 2 * probeTTL, probeTTL / 2
	var wg sync.WaitGroup
	defer func() { hold.release(); wg.Wait() }() // before the unlock
	var longErr error
	wg.Go(func() {
		xctx, cancel := context.WithTimeout(hold.context(ctx), ReleaseTimeout)
		defer cancel()
		longErr = h.Lock.Extend(xctx, long)
	})
	// Every master answered the long Extend (its reply is held): each ran
	// it before it answered, so the short one reaches them after it.
	select {
	case <-hold.answered:
	case <-ctx.Done():
		return false, nil
	}
	hold.arm()
	returned := make(chan struct{})
	wg.Go(func() {
		defer close(returned)
		xctx, cancel := context.WithTimeout(ctx, ReleaseTimeout)
		defer cancel()
		h.Lock.Extend(xctx, short)
	})
	queued := time.NewTimer(extendsQueued)
	defer queued.Stop()
	select {
	case <-hold.other: // sent beside the long one: let it be decided first
		<-returned
	case <-returned: // it returned without sending anything
	case <-queued.C:
		// Nothing went out: it waits for the long one, which goes
		// through now, unless its commands went out meanwhile.
		if !hold.releaseUnlessOther() {
			<-returned
		}
	case <-ctx.Done():
	}
	hold.release()
	wg.Wait()
	h.noteUntil()
	p.e.sample(ctx, h)
	return longErr == nil, nil
}

// The extends-in-order probe's bounds. Its Locker's node timeout is below
// the short Extend's TTL (an Extend's TTL must exceed it). The probe takes
// the short Extend to be waiting for the long one when none of its
// commands went out within extendsQueued of its call. The order does not
// rest on them: with the Extends run at once, the catch needs only that
// the long Extend's fan-out outlast the short one's round trip on healthy
// masters (over the connections the long one's calls gave back), and that
// the short one's commands go out within extendsQueued of its call (a
// few calls and a goroutine each, no I/O). A long Extend that failed for
// want of time is tried again. Unmutated, a miss of either costs nothing:
// the short Extend runs after the long one.
const (
	extendsNodeTimeout = 2 * time.Second
	extendsQueued      = time.Second / 2
	extendsAttempts    = 3
)
