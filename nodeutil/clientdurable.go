package nodeutil

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/quorumlock/quorumlock/redlock"
)

// A ClientNode's identity and durable confirmations. The identity is read
// on every connection OpenClientNode's client dials (dialident.go). A
// confirmation (Durables, group commit) borrows a dedicated connection of
// the client (Dedicated: WAIT and WAITAOF block the connection they are
// sent on, and wait for its own writes) and sends on it, in one round
// trip, INFO server (the process that confirms), the probe write, and
// WAITAOF (local) or WAIT. A confirmation by another process than the one
// the Node knew when the grant asked for it fails with ErrMasterChanged.
// A dedicated connection that broke while it was idle in the client's pool
// (the master restarted) fails the first try: the confirmation goes once
// more, on another connection (the probe and the wait change nothing but
// the probe, so sending them again is harmless), which the client dials,
// and reads, anew.

// errNewNode is why a Node made by NewClientNode knows no identity and
// confirms nothing.
var errNewNode = errors.New("a Node made by New cannot see the connections of a client it did not make, nor tell which master process answers: make it with Open")

// errCluster is why a Node over a Redis Cluster knows no identity and
// confirms nothing.
var errCluster = errors.New("a Redis Cluster is many master processes, with no one identity, and a probe confirms the writes of its own shard only")

// Identity returns what the Node read of its master's process on the
// newest connection of its client: the run id, when the process started
// at the latest (on this client's clock), its persistence and version.
// Before the first connection, when the master refuses INFO, for a Node
// made by NewClientNode, and over a Redis Cluster, it returns an error
// matching redlock.ErrNoIdentity that says why. It is
// redlock.Abilities.Identity, which the restart guard uses.
func (n *ClientNode[C]) Identity() (redlock.Identity, error) {
	if err := n.unknown(); err != nil {
		return redlock.Identity{}, fmt.Errorf("%s: %s: %w: %w", n.exec.Name, n.exec.Addr, redlock.ErrNoIdentity, err)
	}
	return n.ident.Get()
}

// unknown is why the Node cannot know its master's process, nil when it
// can.
func (n *ClientNode[C]) unknown() error {
	switch {
	case n.ident == nil:
		return errNewNode
	case n.several || n.cluster.Load():
		return errCluster
	}
	return nil
}

// Confirm asks for a confirmation that every write that ran on the master
// before the call is in its AOF on disk (with local; WAITAOF, Redis 7.2 or
// Valkey, with appendonly yes) and acknowledged by replicas replicas
// (WAIT, or WAITAOF's second count), writing the key probe first, and
// returns at once; done runs once with the counts acknowledged, or the
// error, on a goroutine of the Node's. Concurrent calls share one
// confirmation. ctx bounds it, and its deadline, less a margin
// (ConfirmWait), is the master's wait. A confirmation by another master
// process than the one Identity knew when Confirm was called fails with
// ErrMasterChanged. A Node made by NewClientNode, or over a Redis Cluster,
// fails every confirmation. It is redlock.Abilities.Confirm.
func (n *ClientNode[C]) Confirm(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error)) {
	n.durable.Confirm(ctx, probe, local, replicas, done)
}

// commit is the Node's Durables.Commit.
func (n *ClientNode[C]) commit(ctx context.Context, probe string, local bool, replicas int) (l, r int, ranOn string, err error) {
	if err := n.unknown(); err != nil {
		return 0, 0, "", fmt.Errorf("%s: %s: durable: %w", n.exec.Name, n.exec.Addr, err)
	}
	c, err := n.exec.Client(ctx)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%s: %s: durable: %w", n.exec.Name, n.exec.Addr, err)
	}
	if err := n.unknown(); err != nil { // the client just made is a cluster client
		return 0, 0, "", fmt.Errorf("%s: %s: durable: %w", n.exec.Name, n.exec.Addr, err)
	}
	type outcome struct {
		l, r  int
		ranOn string
		err   error
	}
	for try := 0; ; try++ {
		// The client's wait for a dedicated connection is not bounded by
		// ctx: the confirmation runs on a goroutine of its own, which
		// ends within the client's dial timeout.
		ch := make(chan outcome, 1)
		go func() {
			var o outcome
			o.l, o.r, o.ranOn, o.err = n.calls.confirm(ctx, c, probe, n.probes.Add(1), local, replicas)
			ch <- o
		}()
		var o outcome
		select {
		case o = <-ch:
		case <-ctx.Done():
			o.err = ctx.Err()
		}
		if o.err == nil {
			return o.l, o.r, o.ranOn, nil
		}
		rerr, reply := clientReply(o.err)
		if !reply {
			rerr = o.err
		}
		if reply || try > 0 || ctx.Err() != nil {
			return 0, 0, o.ranOn, fmt.Errorf("%s: %s: durable: %w", n.exec.Name, n.exec.Addr, rerr)
		}
	}
}

// confirmOn sends INFO server, the probe write and the wait on d, a
// dedicated connection, and returns the counts and the run id of the
// process that answered.
func confirmOn[D rueidisDedicated[B, Cmd, R], B rueidisBuilder[A, S, SC, U, UC, Cmd], A rueidisArbitrary[A, Cmd], S, SC, U, UC, Cmd any, R rueidisResult](ctx context.Context, d D, probe string, n int64, local bool, replicas int) (l, r int, ranOn string, err error) {
	b := d.B()
	ms := strconv.FormatInt(ConfirmWait(ctx).Milliseconds(), 10)
	wait := b.Arbitrary("WAIT").Args(strconv.Itoa(replicas), ms)
	if local {
		wait = b.Arbitrary("WAITAOF").Args("1", strconv.Itoa(replicas), ms)
	}
	res := d.DoMulti(ctx,
		b.Arbitrary("INFO", "server").Build(),
		b.Arbitrary("SET").Keys(probe).Args(strconv.FormatInt(n, 10), "PX", "60000").Build(),
		wait.Build())
	info, err := res[0].ToString()
	if err != nil {
		return 0, 0, "", err
	}
	ranOn = InfoField(info, "run_id")
	if err := res[1].Error(); err != nil {
		return 0, 0, ranOn, err
	}
	if !local {
		count, err := res[2].AsInt64()
		return 0, int(count), ranOn, err
	}
	counts, err := res[2].AsIntSlice()
	if err != nil {
		return 0, 0, ranOn, err
	}
	if len(counts) != 2 {
		return 0, 0, ranOn, fmt.Errorf("unexpected WAITAOF reply %v", counts)
	}
	return int(counts[0]), int(counts[1]), ranOn, nil
}
