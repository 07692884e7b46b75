package pool

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// Durable grants (the redlock.DurableNode ability). A lock script's write
// is durable once the master's AOF holds it on disk (local) and the
// master's replicas acknowledged it (replicas): WAITAOF, or WAIT without
// local. Both wait for the writes of the connection they are sent on, and
// block it meanwhile, so they never go on the shared pipelined connection:
// a connection of their own writes a probe and waits for it
// (nodeutil.Durables and Committer, group commit), which confirms every
// write that ran on the master before the probe, on any connection. A
// confirmation made by another master process than the one the Node knew
// when it was asked for (the master restarted, and the durable connection
// was dialed anew, after the writes) confirms nothing about them: it fails
// with nodeutil.ErrMasterChanged.

// durables are a Node's committers and the connection they share.
type durables struct {
	n *Node
	nodeutil.Durables

	// connMu is held for a whole confirmation (the committers take turns
	// on the one connection).
	connMu sync.Mutex
	conn   *conn // nil until dialed, and after it failed
	probe  int64
}

// init makes d n's.
func (d *durables) init(n *Node) {
	d.n = n
	d.Commit = d.commit
	d.RunID = n.ident.RunID
}

// Durable asks for a confirmation that every write that ran on the master
// before the call is in its AOF on disk (with local; WAITAOF, Redis 7.2 or
// Valkey, with appendonly yes) and acknowledged by replicas replicas
// (WAIT, or WAITAOF's second count), and returns at once; done runs once
// with the counts acknowledged, or the error, on a goroutine of the
// Node's. Concurrent calls share one confirmation. ctx bounds it, and its
// deadline is the WAITAOF's timeout. It is the redlock.DurableNode ability.
func (n *Node) Durable(ctx context.Context, local bool, replicas int, done func(local, replicas int, err error)) {
	n.durable.Durable(ctx, local, replicas, done)
}

// commit writes a probe on the durable connection and waits for it: one
// confirmation at a time per Node (the committers take turns on the one
// connection). It returns the run id the connection read when it was
// dialed.
func (d *durables) commit(ctx context.Context, local bool, replicas int) (l, r int, ranOn string, err error) {
	d.connMu.Lock()
	defer d.connMu.Unlock()
	if d.conn == nil {
		c, err := dial(ctx, d.n.cfg, d.n.ident)
		if err != nil {
			return 0, 0, "", fmt.Errorf("pool: %s: durable: %w", d.n.addr, err)
		}
		d.conn = c
	}
	c := d.conn
	l, r, err = d.probeOn(ctx, c, local, replicas)
	return l, r, c.runID, err
}

// probeOn writes the next probe on c and waits for it.
func (d *durables) probeOn(ctx context.Context, c *conn, local bool, replicas int) (l, r int, err error) {
	d.probe++
	ms := strconv.FormatInt(nodeutil.ConfirmWait(ctx).Milliseconds(), 10)
	cmd, args := "WAIT", []any{replicas, ms}
	if local {
		cmd, args = "WAITAOF", []any{1, replicas, ms}
	}
	c.Send("SET", nodeutil.DurableProbe, d.probe, "PX", 60000)
	c.Send(cmd, args...)
	if err := c.Flush(); err != nil {
		return d.fail(err)
	}
	if _, err := redis.ReceiveContext(c, ctx); err != nil {
		return d.fail(err)
	}
	reply, err := redis.ReceiveContext(c, ctx)
	if err != nil {
		return d.fail(err)
	}
	if local {
		counts, err := redis.Ints(reply, nil)
		if err != nil || len(counts) != 2 {
			return 0, 0, fmt.Errorf("pool: %s: unexpected WAITAOF reply %v (%v)", d.n.addr, reply, err)
		}
		return counts[0], counts[1], nil
	}
	n, err := redis.Int(reply, nil)
	return 0, n, err
}

// fail drops the durable connection after err: an error reply keeps it
// (the command ran and said no), a transport error or timeout closes it.
func (d *durables) fail(err error) (int, int, error) {
	if _, reply := err.(redis.Error); !reply {
		d.conn.Close()
		d.conn = nil
	}
	return 0, 0, fmt.Errorf("pool: %s: durable: %w", d.n.addr, err)
}

// close closes the durable connection.
func (d *durables) close() {
	d.connMu.Lock()
	defer d.connMu.Unlock()
	if d.conn != nil {
		d.conn.Close()
		d.conn = nil
	}
}
