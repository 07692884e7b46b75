package redlock

import (
	"github.com/quorumlock/quorumlock/internal/serial"
	"github.com/quorumlock/quorumlock/quorum"
)

// observe tells Config.OnNodeError and Observer.NodeError that master i's
// call for op failed with err.
func (l *Locker) observe(op string, i int, err error) {
	if l.onNodeError != nil {
		l.onNodeError(op, l.nodes[i].Addr(), err)
	}
	if l.observer != nil {
		l.observer.NodeError(NodeErrorEvent{Op: op, Addr: l.nodes[i].Addr(), Err: err})
	}
}

// reportFailed tells the observers of every failed vote in res, on the
// caller's goroutine; nodes maps res's indices to masters (nil: the same).
func (l *Locker) reportFailed(op string, res *quorum.Result, nodes []int) {
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
		l.observe(op, i, v.Err)
	}
}

// observeLater is observe for a vote that arrived on a goroutine that must
// not run user code (a connection's reader), if it failed: the observers
// are told on a goroutine of their own, one report after the other.
func (l *Locker) observeLater(op string, i int, v quorum.Vote) {
	if v.Err == nil || (l.onNodeError == nil && l.observer == nil) {
		return
	}
	later.Go(func() { l.observe(op, i, v.Err) })
}

// later runs the reports of observeLater one after the other; a burst of
// them (every call pending on a master that froze) costs one goroutine.
var later serial.Queue

// lost tells the Observer that lk ended with err, unless err is its Unlock.
func (lk *Lock) lost(err error) {
	if o := lk.l.observer; o != nil && err != nil && err != errUnlocked {
		o.Lost(LostEvent{Key: lk.key, Kind: lk.v.kind, Cause: err})
	}
}
