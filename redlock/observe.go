package redlock

import "github.com/quorumlock/quorumlock/quorum"

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

// lost tells the Observer that lk ended with err, unless err is its Unlock.
func (lk *Lock) lost(err error) {
	if o := lk.l.observer; o != nil && err != nil && err != errUnlocked {
		o.Lost(LostEvent{Key: lk.key, Kind: lk.v.kind, Cause: err})
	}
}
