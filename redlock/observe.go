package redlock

import (
	"github.com/quorumlock/quorumlock/internal/serial"
	"github.com/quorumlock/quorumlock/quorum"
)

// observe tells Config.OnNodeError and Observer.NodeError of a failed
// vote, and returns the vote.
func (l *Locker) observe(op string, i int, v quorum.Vote) quorum.Vote {
	if v.Err == nil {
		return v
	}
	if l.onNodeError != nil {
		l.onNodeError(op, l.nodes[i].Addr(), v.Err)
	}
	if l.observer != nil {
		l.observer.NodeError(NodeErrorEvent{Op: op, Addr: l.nodes[i].Addr(), Err: v.Err})
	}
	return v
}

// failed is a fan-out's quorum.Options.Failed for op: nil when nobody
// listens. Each op's is made once.
func (l *Locker) failed(op string) func(i int, err error) {
	if l.onNodeError == nil && l.observer == nil {
		return nil
	}
	l.failedOnce.Do(func() {
		l.failedBy = make(map[string]func(int, error), 4)
		for _, op := range []string{opLock, opExtend, opUnlock, opRelease} {
			l.failedBy[op] = func(i int, err error) { l.observe(op, i, quorum.Vote{Err: err}) }
		}
	})
	return l.failedBy[op]
}

// observeLater is observe for a vote that arrived on a goroutine that must
// not run user code (a connection's reader): the Observer and OnNodeError
// are told on a goroutine of their own, one report after the other.
func (l *Locker) observeLater(op string, i int, v quorum.Vote) {
	if v.Err == nil || (l.onNodeError == nil && l.observer == nil) {
		return
	}
	later.Go(func() { l.observe(op, i, v) })
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
