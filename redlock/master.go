package redlock

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// master is one master of a Locker: its Node, what the Node can do (its
// Abilities, read once, in New), and what the Locker knows of it (the
// restart guard's verdict, whether it is failing). Every call to the
// master goes through it, and every reply comes back up through one
// pipeline (complete): read as a vote, judged by the restart guard,
// confirmed durable when Config.Durability asks, then delivered to the
// call's fan-out. The callback path (a Node with EvalAsync, or a goroutine
// per call) and the one-master path (the caller's goroutine) differ only
// in who waits for the reply.
type master struct {
	l    *Locker
	i    int
	node Node
	ab   Abilities

	verdict atomic.Pointer[verdict] // the restart guard's (guard.go); nil before the first
	down    atomic.Bool             // failing, for a NodeStateObserver (observe.go)

	checkMu  sync.Mutex
	checking chan struct{} // closed when the record check in flight ends (checkAlone)
}

// newMaster returns the master of n, the i-th of l's nodes.
func newMaster(l *Locker, i int, n Node) *master {
	return &master{l: l, i: i, node: n, ab: AbilitiesOf(n)}
}

// addr is the master's name.
func (m *master) addr() string { return m.node.Addr() }

// run sends c and waits for its reply.
func (m *master) run(ctx context.Context, c *call) (any, error) {
	if m.ab.EvalPrepared != nil {
		return m.ab.EvalPrepared(ctx, c.s.src, c.prepared)
	}
	keys, args := c.evalArgs()
	return m.node.Eval(ctx, c.s.hash, c.s.src, keys, args...)
}

// start sends c and reports its vote to done as call j: by callback when
// the Node has EvalAsync, else from a goroutine of its own that waits for
// the call. It never blocks.
func (m *master) start(ctx context.Context, c *call, j int, done quorum.Tally) {
	sl := c.slot(m, j, done)
	if m.ab.EvalAsync != nil {
		m.ab.EvalAsync(ctx, c.s.src, c.prepared, sl)
		return
	}
	go func() { sl.Complete(m.run(ctx, c)) }()
}

// complete is the one pipeline every reply of the master goes through, for
// the call of s: the reply read as the call's vote, a grant judged by the
// restart guard and, with Config.Durability, confirmed durable; then
// delivered (maybe on another goroutine, once the confirmation came).
func (m *master) complete(s *slot, reply any, err error) {
	c := s.c
	v := c.vote(reply, err)
	if c.grant > 0 {
		var stale bool
		if v, stale = m.judge(c, v); stale {
			go m.recheck(s, v)
			return
		}
	}
	if v.Yes && c.confirms {
		m.confirm(s, v)
		return
	}
	m.deliver(s, v)
}

// deliver hands the master's final vote on the call of s to the call's
// then, the fan-out and the observers, and sends a failed release again.
func (m *master) deliver(s *slot, v quorum.Vote) {
	c, done := s.c, s.done
	if c.then != nil {
		c.then(m.i, v)
	}
	counted := done.Vote(s.j, v)
	m.l.heard(c, m.i, v, !counted)
	if _, retried := done.(retryTally); !retried {
		m.l.retryRelease(c, m.i, v, 1)
	}
	if c.release {
		m.l.inflight.done() // a retry, if any, counts on its own
	}
}

// fanOut sends c to every master and returns when the outcome is decided
// (quorum.Async): a quorum said yes, or can no longer, or the node timeout
// passed, or ctx ended (which the node calls do not see: every call is
// sent, and goes on). The failed votes of the result are reported to the
// observers before it returns; a failure that comes later is reported by
// its call (master.deliver). With one master the call runs on the caller's
// goroutine, which waits in the Node for its reply (no goroutine per call).
func (l *Locker) fanOut(ctx context.Context, c *call) (*quorum.Result, error) {
	c.ctx = ctx
	if len(l.masters) == 1 {
		return l.runOne(ctx, c)
	}
	res, err := quorum.Async(ctx, len(l.masters), quorum.Options{Need: l.quorum, Timeout: c.fanOutTimeout()},
		func(nctx context.Context, i int, done quorum.Tally) { l.masters[i].start(nctx, c, i, done) })
	l.reportFailed(ctx, c.op, res, nil)
	return res, err
}

// fanOutTo is fanOut to some of the masters (nodes), needing need of them;
// the Result is indexed by position in nodes.
func (l *Locker) fanOutTo(ctx context.Context, c *call, nodes []int, need int) (*quorum.Result, error) {
	c.ctx = ctx
	res, err := quorum.Async(ctx, len(nodes), quorum.Options{Need: need, Timeout: l.nodeTimeout},
		func(nctx context.Context, j int, done quorum.Tally) { l.masters[nodes[j]].start(nctx, c, j, done) })
	l.reportFailed(ctx, c.op, res, nodes)
	return res, err
}

// runOne is fanOut over one master: the call runs on the caller's
// goroutine under the node timeout, and its reply goes through the
// same pipeline as every other (master.complete, master.deliver) into a
// Result of one vote. Like a fan-out's node calls it does not end with
// ctx: it is sent whatever ctx does, and the Node returns at the timeout
// at the latest.
func (l *Locker) runOne(ctx context.Context, c *call) (*quorum.Result, error) {
	one := &oneResult{}
	one.ctx.parent, one.ctx.deadline = ctx, time.Now().Add(l.nodeTimeout)
	m := l.masters[0]
	reply, err := m.run(&one.ctx, c)
	if err != nil && !time.Now().Before(one.ctx.deadline) {
		err = quorum.ErrNoAnswer // as a fan-out counts a master that did not answer in time
	}
	one.ctx.stop()
	sl := c.slot(m, 0, one)
	one.voted.Add(1)
	sl.Complete(reply, err)
	one.voted.Wait() // a recheck or a confirmation may deliver it later, bounded
	l.reportFailed(ctx, c.op, &one.res, nil)
	return &one.res, ctx.Err()
}

// oneResult is the Result of runOne, the Tally its vote goes to, and the
// call's context, in one allocation.
type oneResult struct {
	res      quorum.Result
	votes    [1]quorum.Vote
	answered [1]bool
	voted    sync.WaitGroup // done by Vote
	ctx      soloCtx
}

// Vote implements quorum.Tally: it records the one vote.
func (o *oneResult) Vote(_ int, v quorum.Vote) bool {
	res := &o.res
	res.Votes, res.Answered, res.Need = o.votes[:], o.answered[:], 1
	res.Votes[0], res.Answered[0] = v, true
	switch {
	case v.Err != nil:
		res.Failed = 1
	case v.Yes:
		res.Yes = 1
	default:
		res.No = 1
	}
	o.voted.Done()
	return true
}

// fanOutTimeout is the timeout of c's fan-out: the node timeout, and the
// wait for a durable confirmation where c needs one.
func (c *call) fanOutTimeout() time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return c.l.nodeTimeout
}

// gatherAll sends c to the masters in which (every master when nil) and
// waits until each has answered or the node timeout passed (a fan-out
// decides earlier, at the quorum): the Result holds every answer that came
// in time, indexed by position in which; the others count as failed with
// quorum.ErrNoAnswer. The calls do not end with ctx. Failures are reported
// to the observers.
func (l *Locker) gatherAll(ctx context.Context, c *call, which []int) *quorum.Result {
	if which == nil {
		which = make([]int, len(l.masters))
		for i := range which {
			which[i] = i
		}
	}
	c.ctx = ctx
	n := len(which)
	g := &gather{left: n, done: make(chan struct{})}
	g.res = quorum.Result{Votes: make([]quorum.Vote, n), Answered: make([]bool, n), Need: n}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
	defer cancel()
	for j, i := range which {
		l.masters[i].start(gctx, c, j, g)
	}
	select {
	case <-g.done:
	case <-gctx.Done():
	}
	g.mu.Lock()
	g.over = true
	res := g.res // the votes that came in time; later ones only report themselves
	res.Votes, res.Answered = slices.Clone(res.Votes), slices.Clone(res.Answered)
	g.mu.Unlock()
	for j, answered := range res.Answered {
		if !answered {
			res.Votes[j], res.Answered[j] = quorum.Vote{Err: quorum.ErrNoAnswer}, true
			res.Failed++
		}
	}
	l.reportFailed(ctx, c.op, &res, which)
	return &res
}

// gather is gatherAll's Tally: it keeps every vote until it is over.
type gather struct {
	mu   sync.Mutex
	res  quorum.Result
	left int
	over bool
	done chan struct{}
}

// Vote implements quorum.Tally.
func (g *gather) Vote(j int, v quorum.Vote) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.over {
		return false
	}
	g.res.Votes[j], g.res.Answered[j] = v, true
	switch {
	case v.Err != nil:
		g.res.Failed++
	case v.Yes:
		g.res.Yes++
	default:
		g.res.No++
	}
	if g.left--; g.left == 0 {
		close(g.done)
	}
	return true
}

// sendAll sends c to the masters for which which(i) is true and returns at
// once; done is closed when each has returned (or its node timeout, from
// now, passed). The calls do not end with ctx. Their failures are reported
// to the observers. It is how a failed attempt is cleaned up.
func (l *Locker) sendAll(ctx context.Context, c *call, which func(i int) bool) (done <-chan struct{}) {
	c.ctx = ctx
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
	cl := &cleanup{done: make(chan struct{}), cancel: cancel}
	n := int32(0)
	for i := range l.masters {
		if which(i) {
			n++
		}
	}
	if n == 0 {
		cancel()
		close(cl.done)
		return cl.done
	}
	cl.left.Store(n)
	for i, m := range l.masters {
		if which(i) {
			m.start(sctx, c, i, cl)
		}
	}
	return cl.done
}

// cleanup counts the replies of sendAll's calls.
type cleanup struct {
	left   atomic.Int32
	done   chan struct{}
	cancel context.CancelFunc
}

// Vote implements quorum.Tally; a vote is never counted in a Result, so its
// failure is reported by its call.
func (cl *cleanup) Vote(int, quorum.Vote) bool {
	if cl.left.Add(-1) == 0 {
		cl.cancel()
		close(cl.done)
	}
	return false
}
