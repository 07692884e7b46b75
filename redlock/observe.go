package redlock

import (
	"context"
	"errors"

	"github.com/quorumlock/quorumlock/internal/serial"
	"github.com/quorumlock/quorumlock/quorum"
)

// observe tells Config.OnNodeError and Observer.NodeError that master i's
// call for op failed with err; ctx is the operation's.
func (l *Locker) observe(ctx context.Context, op string, i int, err error) {
	if l.onNodeError != nil {
		l.onNodeError(op, l.masters[i].addr(), err)
	}
	if l.observer != nil {
		l.observer.NodeError(NodeErrorEvent{Op: op, Addr: l.masters[i].addr(), Err: err, ctx: detach(ctx)})
	}
}

// heard is told of every vote of master i on c as it arrives (late: after
// the fan-out decided, so that it is no part of its Result), possibly on a
// connection's reader goroutine: it follows whether the master answers
// (NodeStateObserver), and reports a late failure, both from a goroutine
// of their own.
func (l *Locker) heard(c *call, i int, v quorum.Vote, late bool) {
	l.noteState(c.ctx, i, v.Err)
	if late {
		l.observeLater(c.ctx, c.op, i, v)
	}
}

// noteState records whether master i answered (err is nil) or failed, and
// tells the NodeStateObserver when that changed; it costs nothing without
// one.
func (l *Locker) noteState(ctx context.Context, i int, err error) {
	if l.states == nil {
		return
	}
	// A master the restart guard holds back answered: it is not failing.
	failing, down := err != nil && !errors.Is(err, ErrRestarted), &l.masters[i].down
	if down.Load() == failing || down.Swap(failing) == failing {
		return
	}
	e := NodeStateEvent{Addr: l.masters[i].addr(), Up: !failing, Err: err, ctx: detach(ctx)}
	reports.Go(func() { l.states.NodeState(e) })
}

// reportFailed tells the observers of every failed vote in res, on the
// caller's goroutine; nodes maps res's indices to masters (nil: the same).
// A master that had not answered at the timeout is failing from then on.
func (l *Locker) reportFailed(ctx context.Context, op string, res *quorum.Result, nodes []int) {
	if res == nil || (l.onNodeError == nil && l.observer == nil) {
		return
	}
	for j, v := range res.Votes {
		if !res.Answered[j] || v.Err == nil {
			continue
		}
		i := j
		if nodes != nil {
			i = nodes[j]
		}
		if v.Err == quorum.ErrNoAnswer {
			l.noteState(ctx, i, v.Err)
		}
		l.observe(ctx, op, i, v.Err)
	}
}

// observeLater is observe for a vote that arrived on a goroutine that must
// not run user code (a connection's reader), if it failed: the observers
// are told on a goroutine of their own, one report after the other.
func (l *Locker) observeLater(ctx context.Context, op string, i int, v quorum.Vote) {
	if v.Err == nil || (l.onNodeError == nil && l.observer == nil) {
		return
	}
	reports.Go(func() { l.observe(ctx, op, i, v.Err) })
}

// reports runs the reports made off the caller's goroutine (observeLater,
// noteState) one after the other; a burst of them (every call pending on a
// master that froze) costs one goroutine.
var reports serial.Queue

// lost tells the Observer that lk ended with err, unless err is its Unlock.
func (lk *Lock) lost(err error) {
	if o := lk.l.observer; o != nil && err != nil && err != errUnlocked {
		o.Lost(LostEvent{Key: lk.key, Kind: lk.v.kind, Cause: err, ctx: lk.ctx})
	}
}
