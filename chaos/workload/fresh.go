package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// A fresh process. Users run Lockers in processes that live for one job
// ("redlock run", a cron job, a lambda) as much as in services that live
// for weeks, and a process that starts after a master restarted has seen
// nothing of it: its Nodes' first connection meets the new process. Fresh
// makes such a client: the same slot of the Env (its proxies, its id in
// the history, its Locker configuration) over Nodes and Lockers of its
// own, made now.

// Fresh returns a client in slot's place, as a process that starts now
// would make it: new Nodes of transport t through slot's proxies, and new
// Lockers with slot's configuration. close releases it as that process
// would before it exits: Locker.Close (every release in flight lands),
// then the Nodes.
func (e *Env) Fresh(slot int, t Transport) (c *Client, close func(), err error) {
	d := newDialer(t, e.Cluster.Password(), optionsRNG(uint64(slot)))
	var (
		nodes   []redlock.Node
		closers []func() error
	)
	closeNodes := func() {
		for _, f := range closers {
			f()
		}
	}
	for _, addr := range e.Net.Addrs(slot) {
		mn, err := d.dial(addr)
		if err != nil {
			closeNodes()
			return nil, nil, err
		}
		nodes, closers = append(nodes, mn.node), append(closers, mn.close)
	}
	cfg := e.clients[slot].cfg
	cfg.Observer = nil // newClient observes it anew
	c, err = newClient(slot, e, nodes, cfg)
	if err != nil {
		closeNodes()
		return nil, nil, fmt.Errorf("workload: fresh client in slot %d: %w", slot, err)
	}
	return c, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c.Close(ctx)
		closeNodes()
	}, nil
}

// Close closes the client's Lockers (Locker.Close: their releases in
// flight land), not its Nodes.
func (c *Client) Close(ctx context.Context) error {
	var errs []error
	for _, l := range []*redlock.Locker{c.Locker, c.plain, c.long.Locker, c.long.plain, c.probing.Locker, c.probing.plain} {
		errs = append(errs, l.Close(ctx))
	}
	return errors.Join(errs...)
}
