package redlock

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// sender sends calls to one master, the way its Node can take them. What
// the Node can do is found out once, in New, never per call.
type sender struct {
	i        int
	node     Node
	prepared PreparedEvaler // nil: Eval
	async    AsyncNode      // nil: a goroutine per call
	sub      Subscriber     // nil: no wake on release through it
	ident    MasterIdentity // nil: the restart guard cannot apply
	durable  DurableNode    // nil: no durable grants (New refuses Config.Durability then)
}

func newSender(i int, n Node) sender {
	s := sender{i: i, node: n}
	s.prepared, _ = n.(PreparedEvaler)
	s.async, _ = n.(AsyncNode)
	s.sub, _ = n.(Subscriber)
	s.ident, _ = n.(MasterIdentity)
	s.durable, _ = n.(DurableNode)
	return s
}

// run sends c and waits for its reply.
func (s *sender) run(ctx context.Context, c *call) (any, error) {
	if s.prepared != nil {
		return s.prepared.EvalPrepared(ctx, c.s.src, c.prepared)
	}
	keys, args := c.evalArgs()
	return s.node.Eval(ctx, c.s.hash, c.s.src, keys, args...)
}

// start sends c and reports its vote to done as call j: by callback when
// the Node is an AsyncNode, else from a goroutine of its own that waits for
// the call. It never blocks.
func (s *sender) start(ctx context.Context, c *call, j int, done quorum.Tally) {
	sl := c.slot(s.i, j, done)
	if s.async != nil {
		s.async.EvalPreparedAsync(ctx, c.s.src, c.prepared, sl)
		return
	}
	go func() { sl.Complete(s.run(ctx, c)) }()
}

// fanOut sends c to every master and returns when the outcome is decided
// (quorum.Async): a quorum said yes, or can no longer, or the node timeout
// passed, or ctx ended (which the node calls do not see: every call is
// sent, and goes on). The failed votes of the result are reported to the
// observers before it returns; a failure that comes later is reported by
// its call (slot.Complete). With one master the call runs on the caller's
// goroutine, which waits in the Node for its reply (no goroutine per call).
func (l *Locker) fanOut(ctx context.Context, c *call) (*quorum.Result, error) {
	c.ctx = ctx
	if len(l.senders) == 1 {
		return l.runOne(ctx, c)
	}
	res, err := quorum.Async(ctx, len(l.senders), quorum.Options{Need: l.quorum, Timeout: c.fanOutTimeout()},
		func(nctx context.Context, i int, done quorum.Tally) { l.senders[i].start(nctx, c, i, done) })
	l.reportFailed(ctx, c.op, res, nil)
	return res, err
}

// fanOutTo is fanOut to some of the masters (nodes), needing need of them;
// the Result is indexed by position in nodes.
func (l *Locker) fanOutTo(ctx context.Context, c *call, nodes []int, need int) (*quorum.Result, error) {
	c.ctx = ctx
	res, err := quorum.Async(ctx, len(nodes), quorum.Options{Need: need, Timeout: l.nodeTimeout},
		func(nctx context.Context, j int, done quorum.Tally) { l.senders[nodes[j]].start(nctx, c, j, done) })
	l.reportFailed(ctx, c.op, res, nodes)
	return res, err
}

// runOne is fanOut over one master: the call runs on the caller's
// goroutine under the node timeout. Like a fan-out's node calls it does
// not end with ctx: it is sent whatever ctx does, and Node.Do returns at
// the node timeout at the latest.
func (l *Locker) runOne(ctx context.Context, c *call) (*quorum.Result, error) {
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
	reply, err := l.senders[0].run(nctx, c)
	timedOut := nctx.Err() != nil
	cancel()
	v := c.voteOf(0, reply, err)
	if v.Err != nil && timedOut {
		v.Err = quorum.ErrNoAnswer
	}
	if c.durable && v.Yes {
		confirmed := make(chan quorum.Vote, 1)
		l.confirm(c, 0, v, func(v quorum.Vote) { confirmed <- v })
		v = <-confirmed
	}
	if c.then != nil {
		c.then(0, v)
	}
	l.heard(c, 0, v, false)
	l.retryRelease(c, 0, v, 1)
	one := &oneResult{}
	res := &one.res
	res.Votes, res.Answered, res.Need = one.votes[:], one.answered[:], 1
	res.Votes[0], res.Answered[0] = v, true
	switch {
	case v.Err != nil:
		res.Failed = 1
	case v.Yes:
		res.Yes = 1
	default:
		res.No = 1
	}
	l.reportFailed(ctx, c.op, res, nil)
	return res, ctx.Err()
}

// fanOutTimeout is the timeout of c's fan-out: the node timeout, and the
// wait for a durable confirmation where c needs one.
func (c *call) fanOutTimeout() time.Duration {
	if c.timeout > 0 {
		return c.timeout
	}
	return c.l.nodeTimeout
}

// oneResult is a Result of one vote in one allocation.
type oneResult struct {
	res      quorum.Result
	votes    [1]quorum.Vote
	answered [1]bool
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
	for i := range l.senders {
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
	for i := range l.senders {
		if which(i) {
			l.senders[i].start(sctx, c, i, cl)
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
