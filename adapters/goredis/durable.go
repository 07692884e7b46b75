package goredis

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// Durable grants (redlock.Abilities.Confirm, which
// redlock.Config.Durability needs). A grant is durable once the master's
// AOF holds it on disk (WAITAOF, Redis 7.2+ or Valkey, with appendonly
// yes) and its replicas acknowledged it (WAIT, or WAITAOF's second
// count). Both wait for the writes of the connection they are sent on and
// block it meanwhile, so they never go out on a connection of the client
// that other calls share: one confirmation is a go-redis pipeline, which
// holds one connection of the client's pool for its length and runs
// INFO server, a probe write (nodeutil.DurableProbe) and the WAIT or
// WAITAOF on it, with a read timeout that covers the wait. The probe runs
// after every write whose reply came back before it (the master's AOF and
// replication stream keep the order in which commands ran), so its
// confirmation covers them, on whatever connection they came:
// nodeutil.Durables makes every grant that asks meanwhile share the next
// one (group commit), so at most one connection per kind of confirmation
// is held at a time.
//
// A confirmation made by another master process than the one the Node
// knew when it was asked for confirms nothing about the grants before it:
// a failover client that followed Sentinel to a promoted replica between
// a grant and its confirmation would otherwise count the grant the old
// master took with it. The pipeline's INFO names the process that
// confirmed; when it is not the one the Node had read (Identity: its
// newest connection, or the reading through the client before its first
// call) at the moment the grant asked, the grant's confirmation fails with
// nodeutil.ErrMasterChanged. Not covered: a master change between a
// grant's reply and its request for confirmation that a new connection
// noted first (the Node cannot tell which connection a reply came on), and
// a master whose identity is unknown (INFO refused).
//
// Only a *redis.Client (one server, or a failover client) can confirm: a
// *redis.ClusterClient spreads the keys of different locks over several
// shards, whose confirmations would each need a probe of their own, and
// has no one identity; Confirm is not among its Node's Abilities.

// Confirm asks for a confirmation that every write that ran on the master
// before the call is in its AOF on disk (with local) and acknowledged by
// replicas replicas, writing the key probe first, and returns at once;
// done runs once with the counts acknowledged, or the error, on a
// goroutine of the Node's. Concurrent calls share one confirmation. ctx
// bounds it (a margin before its deadline, nodeutil.ConfirmWait); without
// a deadline the master waits up to a second. A confirmation by another
// master process than the one Identity knew when Confirm was called fails
// with nodeutil.ErrMasterChanged; over a client other than a
// *redis.Client every confirmation fails. It is redlock.Abilities.Confirm.
func (n *Node) Confirm(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error)) {
	n.durable.Confirm(ctx, probe, local, replicas, done)
}

// commit writes probe and waits for it on one connection of the client,
// and returns the run id of the master process that answered.
func (n *Node) commit(ctx context.Context, probe string, local bool, replicas int) (l, r int, ranOn string, err error) {
	c := n.rc
	if c == nil {
		return 0, 0, "", fmt.Errorf("goredis: %s: durable: %w", n.addr, errNoProcess)
	}
	wait := nodeutil.ConfirmWait(ctx)
	var (
		info *redis.StringCmd
		ack  *redis.Cmd
	)
	// The clone shares c's pool and hooks; its read timeout covers the wait.
	_, err = c.WithTimeout(wait+time.Second).Pipelined(ctx, func(p redis.Pipeliner) error {
		info = p.Info(ctx, "server")
		p.Set(ctx, probe, n.probe.Add(1), time.Minute)
		if local {
			ack = p.Do(ctx, "WAITAOF", 1, replicas, wait.Milliseconds())
		} else {
			ack = p.Do(ctx, "WAIT", replicas, wait.Milliseconds())
		}
		return nil
	})
	ranOn = nodeutil.InfoField(info.Val(), "run_id")
	if err != nil {
		return 0, 0, ranOn, fmt.Errorf("goredis: %s: durable: %w", n.addr, err)
	}
	if !local {
		r, err := ack.Int()
		return 0, r, ranOn, err
	}
	counts, err := ack.Int64Slice()
	if err != nil || len(counts) != 2 {
		return 0, 0, ranOn, fmt.Errorf("goredis: %s: unexpected WAITAOF reply %v (%v)", n.addr, ack.Val(), err)
	}
	return int(counts[0]), int(counts[1]), ranOn, nil
}
