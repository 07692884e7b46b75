package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

// everysec is the body of restart-everysec and its twin: restart-unsafe's
// shared master, on masters with AOF and appendfsync everysec, the common
// production setting, which loses the last second of writes when the
// machine crashes (a killed process loses nothing: the page cache keeps
// what it wrote). Master 2 loses power (cluster.PowerLoss) at the instant
// it granted A the lock, before its next fsync, and comes back at once
// without the grant. The restart guard is off in both (RestartGuard -1),
// so that only durability tells them apart; with Durability.Local the
// grant counts only once WAITAOF confirmed it, which the power loss came
// before.
//
// WAITAOF needs Valkey or Redis 7.2+: the pair runs on the run's server
// when it has it, else on valkey-server, and is skipped, saying why, where
// neither is found. The power loss needs the local backend.
type everysec struct {
	durable bool
	// transport is how A and B reach the masters (default: pipelined).
	transport workload.Transport
}

// everysecTTL is A's TTL: long, as restart-unsafe's, so that A's lock is
// valid whenever B gets it.
const everysecTTL = 10 * time.Second

func (s everysec) locker(i int) redlock.Config {
	cfg := workload.LockerConfig(workload.NodeTimeout)
	cfg.RestartGuard = -1
	if i == 0 {
		// A's call to master 2 returns only once the power loss and the
		// restart are done.
		cfg.NodeTimeout = time.Second
	}
	if s.durable {
		// WAITAOF waits for at most the next fsync, a second away.
		cfg.Durability = redlock.Durability{Local: true, Timeout: 500 * time.Millisecond}
	}
	return cfg
}

func (s everysec) run(ctx context.Context, r *Run) error {
	if r.opts.Backend != cluster.BackendLocal {
		return fmt.Errorf("%w: a power loss needs the local backend (the AOF is cut back in the node's directory)", cluster.ErrUnsupported)
	}
	bin, err := cluster.WaitAOFServer(r.opts.Server)
	if err != nil {
		return err
	}
	r.useServer(bin)
	var (
		g    *grantNode
		mark cluster.Synced
	)
	e, err := r.EnvOn(ctx, func(ctx context.Context) (cluster.Cluster, error) {
		return cluster.StartLocal(ctx, cluster.Config{Nodes: Nodes, Persistence: cluster.PersistenceEverysec, Server: bin})
	}, workload.EnvConfig{Clients: 2, Locker: s.locker, Transport: transportOr(s.transport), Wrap: func(c, i int, n redlock.Node) redlock.Node {
		if c != 0 || i != 2 {
			return n
		}
		g = &grantNode{Node: n}
		return g
	}})
	if err != nil {
		return err
	}
	master := e.Cluster.Nodes()[2]
	g.key = e.Key("k")
	g.strike = func() error {
		start := e.Now()
		lost, err := cluster.PowerLoss(ctx, master, mark)
		if err != nil {
			return err
		}
		err = master.Start(ctx)
		e.Faults.Record(fault.Fault{Kind: fault.Restart, Node: 2}, start, e.Now(),
			fmt.Sprintf("power loss at the instant of the grant: the AOF cut back to the last fsync (%d bytes lost), restarted at once", lost))
		return err
	}
	a, b := e.Client(0), e.Client(1)
	if err := r.Apply(ctx, cuts(2)...); err != nil {
		return err
	}
	// A locks without a warm-up: its connections are made on the way, so
	// its durable connection is first dialed after the power loss, to the
	// restarted process, whose confirmation must not count for the grant
	// the old one lost (nodeutil.ErrMasterChanged). Master 2 fsyncs right
	// before A's acquire goes to it (grantNode.prime): the power loss must
	// come within cluster.FsyncWindow of that, and A's connection set-up,
	// slow on a loaded machine, comes before it.
	g.prime = func() (err error) {
		mark, err = cluster.Sync(ctx, master)
		return err
	}
	actx, cancel := context.WithTimeout(ctx, 10*time.Second) // a failed durable attempt waits for the cut masters
	ha, err := a.Acquire(actx, "k", everysecTTL, false)
	cancel()
	if serr := g.struck(); serr != nil {
		return serr
	}
	if err != nil {
		return fmt.Errorf("scenario: client A could not lock on masters 0-2: %w", err)
	}
	r.Logf("A granted on redis-0..2 (token %d), valid for %v", ha.Token, time.Until(ha.Lock.Until()).Round(time.Millisecond))
	firstConfirm, confirmed := g.confirmedAfter()
	if s.durable {
		r.Logf("master 2's first durable confirmation after the power loss: %s", errText(firstConfirm))
	}
	hb, bWhileA, _, _ := contend(ctx, r, b, ha, everysecTTL, time.Second, 10*time.Second)
	if judge(r, bWhileA) {
		return nil
	}
	r.Check("the grant lost with the power was not confirmed", confirmed && firstConfirm != nil,
		"master 2's first confirmation after the power loss: %s", errText(firstConfirm))
	r.Check("B acquires", hb != nil, "")
	early, took, err := cluster.WaitAOFEarly(ctx, e.Cluster.Nodes()[4])
	if err != nil {
		return err
	}
	if early {
		r.Logf("%s acknowledged WAITAOF %v after a write, before its next fsync: it confirms a write that a killed process keeps, not one that a power loss within the second keeps (redis/redis#13793); this scenario's power loss comes before the confirmation", bin, took.Round(time.Microsecond))
	}
	return nil
}

// transportOr gives every client t, or leaves the choice to the Env (nil)
// when t is "".
func transportOr(t workload.Transport) func(int) workload.Transport {
	if t == "" {
		return nil
	}
	return workload.AllOver(t)
}
