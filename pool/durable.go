package pool

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// Durable grants (redlock.Abilities.Confirm). A lock script's write
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
	fresh  bool // conn was dialed for the confirmation in progress
}

// init makes d n's.
func (d *durables) init(n *Node) {
	d.n = n
	d.Commit = d.commit
	d.RunID = n.ident.RunID
}

// Confirm asks for a confirmation that every write that ran on the master
// before the call is in its AOF on disk (with local; WAITAOF, Redis 7.2 or
// Valkey, with appendonly yes) and acknowledged by replicas replicas
// (WAIT, or WAITAOF's second count), writing the key probe first, and
// returns at once; done runs once with the counts acknowledged, or the
// error, on a goroutine of the Node's. Concurrent calls share one
// confirmation. ctx bounds it, and its deadline, less a margin
// (nodeutil.ConfirmWait), is the WAITAOF's timeout. It is
// redlock.Abilities.Confirm.
func (n *Node) Confirm(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error)) {
	n.durable.Confirm(ctx, probe, local, replicas, done)
}

// commit writes probe on the durable connection and waits for it: one
// confirmation at a time per Node (the committers take turns on the one
// connection). It returns the run id the connection read when it was
// dialed. A connection that the master closed while it was idle (its
// timeout setting) is dialed anew, once: the probe and its wait change
// nothing on the master but the probe, so sending them again is harmless.
func (d *durables) commit(ctx context.Context, probe string, local bool, replicas int) (l, r int, ranOn string, err error) {
	d.connMu.Lock()
	defer d.connMu.Unlock()
	for {
		d.fresh = d.conn == nil
		if d.conn == nil {
			c, err := dial(ctx, d.n.cfg, d.n.ident)
			if err != nil {
				return 0, 0, "", fmt.Errorf("pool: %s: durable: %w", d.n.addr, err)
			}
			d.conn = c
		}
		c := d.conn
		l, r, err = d.probeOn(ctx, c, probe, local, replicas)
		if err != nil && !d.fresh && d.conn == nil && ctx.Err() == nil {
			continue // an old connection failed: once more on a new one
		}
		return l, r, c.runID, err
	}
}

// probeOn writes the next probe on c and waits for it.
func (d *durables) probeOn(ctx context.Context, c *conn, probe string, local bool, replicas int) (l, r int, err error) {
	d.probe++
	ms := strconv.FormatInt(nodeutil.ConfirmWait(ctx).Milliseconds(), 10)
	cmd, args := "WAIT", []any{replicas, ms}
	if local {
		cmd, args = "WAITAOF", []any{1, replicas, ms}
	}
	c.Send("SET", probe, d.probe, "PX", 60000)
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
