package workload

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/quorumlock/quorumlock/redlock"
)

// A crashed process sends nothing more, and cleans nothing up: a fair
// waiter that crashes stops refreshing its registration and never
// withdraws it, a holder never unlocks. The harness crashes a call by
// giving it a Locker of its own whose nodes stop sending at once
// (crashNode): what was sent before still lands; every later call fails
// without reaching the master.

// errCrashed is the error of every call a crashed node refuses to send.
var errCrashed = errors.New("workload: the process crashed")

// crashNode is a Node that sends nothing once crashed is set.
type crashNode struct {
	redlock.Node
	crashed *atomic.Bool
}

func (n crashNode) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	if n.crashed.Load() {
		return nil, errCrashed
	}
	return n.Node.Do(ctx, cmd, args...)
}

func (n crashNode) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	if n.crashed.Load() {
		return nil, errCrashed
	}
	return n.Node.Eval(ctx, hash, src, keys, args...)
}

// Abilities are the wrapped Node's, each refused once crashed; its script
// calls go through Eval, so that they are refused too.
func (n crashNode) Abilities() redlock.Abilities {
	a := redlock.AbilitiesOf(n.Node)
	a.EvalPrepared, a.EvalAsync = nil, nil
	if sub := a.Subscribe; sub != nil {
		a.Subscribe = func(ctx context.Context, channel string, ch chan<- struct{}) (func(), error) {
			if n.crashed.Load() {
				return nil, errCrashed
			}
			return sub(ctx, channel, ch)
		}
	}
	if confirm := a.Confirm; confirm != nil {
		a.Confirm = func(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error)) {
			if n.crashed.Load() {
				done(0, 0, errCrashed)
				return
			}
			confirm(ctx, probe, local, replicas, done)
		}
	}
	return a
}

// crashable returns a Locker configured as c's own (without fencing, with
// an observer of its own, obs) over c's nodes, and the function that
// crashes it: from then on nothing it sends reaches a master.
func (c *Client) crashable() (l *redlock.Locker, obs *observer, crash func(), err error) {
	crashed := new(atomic.Bool)
	nodes := make([]redlock.Node, len(c.nodes))
	for j, n := range c.nodes {
		nodes[j] = crashNode{Node: n, crashed: crashed}
	}
	obs = newObserver(c, nil, nodes)
	cfg := c.cfg
	cfg.Fencing, cfg.AutoRenew, cfg.Observer = false, false, obs
	if l, err = redlock.New(nodes, cfg); err != nil {
		return nil, nil, nil, err
	}
	return l, obs, func() { crashed.Store(true) }, nil
}
