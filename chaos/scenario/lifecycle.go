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

// A process's life around its locks (issue 29): a process that locks,
// unlocks, closes its Locker and exits must leave nothing behind, although
// Unlock returns once a quorum answered; a durable confirmation after the
// master closed the idle connection must not fail a healthy master; and
// "redlock unlock --force" deletes only what the library wrote.

func lifecycleScenarios() []Scenario {
	return []Scenario{
		{
			Name:      "close-per-lock",
			Invariant: "a process per lock (lock, unlock, Locker.Close, close the Nodes, exit), ten in a row, with one master's link cut when the release goes and healed 50ms later (the release fails and is sent again after a backoff, when Unlock returned at the quorum long before): nothing is left on any master once each process closed",
			Expect:    "every lock granted and released; no key of the run on any master right after each process closed",
			Driven:    &Driven{Transport: workload.Pipelined, Lifetime: string(perLock)},
			run:       closePerLock,
		},
		{
			Name:        "durable-idle",
			Persistence: cluster.PersistenceEverysec,
			Invariant:   "durable grants (Durability{Local: true}) on masters that close idle connections after a second (timeout 1): a grant after the durable connection was closed for idleness is confirmed on a new one, not refused",
			Expect:      "both grants confirmed and counted, the second after 2.5s idle; needs a server with WAITAOF (Valkey, Redis 7.2+)",
			run:         durableIdle,
		},
		{
			Name:      "slow-grant",
			Invariant: "a lock whose quorum's replies come late (every reply of the client's links delayed 80ms, well within the node timeout) is guaranteed until start + TTL - drift, counted from when the attempt began, not from when the replies came: its Until never passes what the masters enforce",
			Expect:    "5 grants, each sampled on the masters: 0 violations of until-within-expiry",
			run:       slowGrant,
		},
		{
			Name:      "unlock-force-spares-data",
			Kind:      "command",
			Invariant: "redlock unlock --force deletes only what the library wrote: values that are not the library's (a UUID, a JWT, a URL, each with a TTL) under a lock's name and its derived names survive; a real lock is removed",
			Expect:    "every non-lock value still there after unlock --force; the real lock gone",
			run:       unlockForceSparesData,
		},
	}
}

// closePerLock is the body of close-per-lock.
func closePerLock(ctx context.Context, r *Run) error {
	e, err := r.Env(ctx, workload.EnvConfig{Clients: 1})
	if err != nil {
		return err
	}
	cut := fault.Fault{Kind: fault.Cut, Node: 4, Clients: []int{0}}
	heal := fault.Fault{Kind: fault.Heal, Node: 4, Clients: []int{0}}
	left := 0
	for i := range 10 {
		c, closeC, err := e.Fresh(0, workload.Transports[i%len(workload.Transports)])
		if err != nil {
			return err
		}
		h, err := c.Acquire(ctx, "k", 10*time.Second, true)
		if err != nil {
			closeC()
			r.Check(fmt.Sprintf("process %d locks", i), false, "%s", err)
			continue
		}
		if err := r.Apply(ctx, cut); err != nil {
			return err
		}
		time.AfterFunc(50*time.Millisecond, func() { r.Apply(context.WithoutCancel(ctx), heal) })
		h.Release(ctx)
		closeC()
		n, err := e.KeysLeft(ctx)
		if err != nil {
			return err
		}
		left += n
	}
	r.Check("nothing left once each process closed", left == 0, "%d keys left right after the processes closed", left)
	return nil
}

// slowGrant is the body of slow-grant.
func slowGrant(ctx context.Context, r *Run) error {
	// A node timeout far above the delay: the grants must come in time,
	// late as their replies are, on a loaded machine too.
	e, err := r.Env(ctx, workload.EnvConfig{Clients: 1, Locker: func(int) redlock.Config { return workload.LockerConfig(500 * time.Millisecond) }})
	if err != nil {
		return err
	}
	c := e.Client(0)
	// Registered with every reply on time: the guard's round is no part
	// of what is measured.
	if err := register(ctx, e, c, 2*time.Second); err != nil {
		return err
	}
	for j := range e.Cluster.Nodes() {
		if err := r.Apply(ctx, fault.Fault{Kind: fault.DelayReplies, Node: j, Clients: []int{0}, Arg: 80 * time.Millisecond}); err != nil {
			return err
		}
	}
	for i := range 5 {
		h, err := c.Acquire(ctx, fmt.Sprint("k", i), time.Second, true)
		if err != nil {
			r.Check(fmt.Sprintf("lock %d granted", i), false, "%s", err)
			continue
		}
		e.Sample(ctx, h)
		h.Release(ctx)
	}
	return e.Faults.HealAll(ctx)
}

// durableIdle is the body of durable-idle.
func durableIdle(ctx context.Context, r *Run) error {
	if r.opts.Backend != cluster.BackendLocal {
		return fmt.Errorf("%w: the masters' timeout setting needs the local backend", cluster.ErrUnsupported)
	}
	bin, err := cluster.WaitAOFServer(r.opts.Server)
	if err != nil {
		return err
	}
	r.useServer(bin)
	e, err := r.EnvOn(ctx, func(ctx context.Context) (cluster.Cluster, error) {
		return cluster.StartLocal(ctx, cluster.Config{Nodes: Nodes, Persistence: cluster.PersistenceEverysec, Server: bin, Args: []string{"--timeout", "1"}})
	}, workload.EnvConfig{Clients: 1, Locker: func(int) redlock.Config {
		cfg := workload.LockerConfig(workload.NodeTimeout)
		cfg.Durability = redlock.Durability{Local: true, Timeout: time.Second}
		return cfg
	}})
	if err != nil {
		return err
	}
	c := e.Client(0)
	for i := range 2 {
		if i == 1 {
			// The masters close a connection once its idle time, counted
			// in whole seconds of their clock, exceeds the timeout (1):
			// after 2s at the latest, within a cron tick (100ms). 1.5s,
			// as this waited before, left the connections open in about
			// half of the runs, and the self-test's defect unseen.
			time.Sleep(2500 * time.Millisecond)
			r.Logf("2.5s idle: the masters closed the idle connections (timeout 1)")
		}
		h, err := c.Acquire(ctx, "k", time.Second, true)
		r.Check(fmt.Sprintf("grant %d confirmed", i+1), err == nil, "%s", errText(err))
		if h != nil {
			h.Release(ctx)
		}
	}
	return nil
}

// unlockForceSparesData is the body of unlock-force-spares-data.
func unlockForceSparesData(ctx context.Context, r *Run) error {
	cmds, err := workload.BuildCommands(ctx)
	if err != nil {
		return err
	}
	defer cmds.Close()
	e, err := r.Env(ctx, workload.EnvConfig{Clients: 1})
	if err != nil {
		return err
	}
	data := map[string]string{
		"uuid": "4f1c2b7e-9d3a-4c51-8e2f-6a7b8c9d0e1f",
		"jwt":  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
		"url":  "https://example.com/cache/entry",
	}
	for name, v := range data {
		for _, n := range e.Cluster.Nodes() {
			if err := cluster.Do(ctx, n.Addr(), "SET", e.Key(name), v, "PX", 60000); err != nil {
				return err
			}
		}
		exit, out, err := cmds.Unlock(ctx, e, 0, e.Key(name))
		if err != nil {
			return err
		}
		kept := 0
		for _, n := range e.Cluster.Nodes() {
			if got, ok, err := cluster.Get(ctx, n.Addr(), e.Key(name)); err == nil && ok && got == v {
				kept++
			}
		}
		r.Check(fmt.Sprintf("a %s under a lock's name survives unlock --force", name), kept == len(e.Cluster.Nodes()),
			"kept on %d of %d masters; exit %d: %s", kept, len(e.Cluster.Nodes()), exit, out)
	}
	h, err := e.Client(0).Acquire(ctx, "lock", time.Minute, true)
	if err != nil {
		return err
	}
	exit, out, err := cmds.Unlock(ctx, e, 0, e.Key("lock"))
	if err != nil {
		return err
	}
	left, err := e.AwaitNoKeys(ctx, 2*time.Second)
	if err != nil {
		return err
	}
	r.Check("a real lock is removed", left == len(data)*len(e.Cluster.Nodes()), "%d keys left (want only the %d data values); exit %d: %s", left, len(data)*len(e.Cluster.Nodes()), exit, out)
	h.Release(ctx)
	return nil
}
