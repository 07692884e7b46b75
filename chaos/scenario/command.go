package scenario

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// commandScenarios are the scenarios whose clients are the redlock command
// itself (workload.RunCommands).
func commandScenarios() []Scenario {
	return []Scenario{{
		Name: "safe-command",
		Kind: "command",
		Invariant: "the redlock command: no two jobs of one key ever run at once, recorded by the jobs themselves (flock), " +
			"while jobs ignore SIGTERM and leave workers behind (in their process group or after setsid), redlock is killed with SIGKILL, " +
			"a slot is cut off from every master past the TTL, and a random minority of the masters is faulted; no job outlives the run",
		Expect: "0 overlaps; every redlock exits with a documented status; no process of any job left once every redlock ended",
		run:    safeCommand,
	}, {
		Name:        "restart-command",
		Kind:        "command",
		Persistence: cluster.PersistenceNone,
		Invariant:   "restart-guarded's restart with the redlock command on both sides, every run a process of its own: A's job runs under a renewed lock on masters 0-2; master 2 restarts at once, empty; B's runs, started after the restart, through masters 2-4, one waiting (-w) and one a second that gives up at once",
		Expect:      "0 overlaps of the jobs (flock): the restarted master's grants do not count for B's fresh processes until it was up for the TTL, and A's job is stopped when its renewals fail; B's waiting run gets the lock",
		Driven:      &Driven{Transport: workload.Command, Lifetime: string(perLock)},
		run:         restartCommand,
	}}
}

// awaitRenewal returns once key's TTL on the master at addr went up (a
// renewal landed), or with ctx's error.
func awaitRenewal(ctx context.Context, addr, key string) error {
	last, err := cluster.PTTL(ctx, addr, key)
	for err == nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		var ms int64
		if ms, err = cluster.PTTL(ctx, addr, key); err == nil && ms > last {
			return nil
		}
		last = ms
	}
	return err
}

// restartCommandTTL is restart-command's --ttl.
const restartCommandTTL = 3 * time.Second

// restartCommand is restart-guarded's restart with "redlock run" as A and
// B (see Scenario.Invariant).
func restartCommand(ctx context.Context, r *Run) error {
	cmds, err := workload.BuildCommands(ctx)
	if err != nil {
		return err
	}
	defer cmds.Close()
	e, err := r.Env(ctx, workload.EnvConfig{Clients: 2})
	if err != nil {
		return err
	}
	if err := register(ctx, e, e.Client(0), registerTTL); err != nil {
		return err
	}
	if err := r.Apply(ctx, cuts(2)...); err != nil {
		return err
	}
	runs := map[string]int{}
	var mu sync.Mutex
	run := func(client int, sp workload.OnceSpec) error {
		exit, err := cmds.RunOnce(ctx, e, client, sp)
		mu.Lock()
		runs[sp.ID] = exit
		mu.Unlock()
		return err
	}
	var g errgroup.Group
	g.Go(func() error {
		return run(0, workload.OnceSpec{ID: "0.1", Key: "k", TTL: restartCommandTTL, Wait: 5 * time.Second, Hold: 3 * restartCommandTTL})
	})
	for !cmds.Started("0.1") {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	r.Logf("A's job runs under redlock run (TTL %v, renewed) on masters 0-2", restartCommandTTL)
	// The restart comes right after one of A's renewals, when A's lock
	// is valid for the longest: B, if it counted the restarted master
	// before that lock's TTL passed, would run its job beside A's.
	if err := awaitRenewal(ctx, e.Cluster.Nodes()[0].Addr(), e.Key("k")); err != nil {
		return err
	}
	if err := r.Apply(ctx, restartAtOnce(restartCommandTTL)); err != nil {
		return err
	}
	r.Logf("then, right after a renewal of A's, restart redis-2, at once, empty")
	// B: one run that waits for the lock, and runs that try once, one
	// started every 200ms over the TTL, each in a process of its own,
	// while A's job may hold it. They overlap: each takes longer than
	// 200ms (a process's start, its reads of the masters, and its Close,
	// which waits up to 2s for releases to the masters cut off from B).
	g.Go(func() error {
		return run(1, workload.OnceSpec{ID: "1.1", Key: "k", TTL: restartCommandTTL, Wait: 4 * restartCommandTTL, Hold: 200 * time.Millisecond})
	})
	for n := 2; n < 2+int(restartCommandTTL/(200*time.Millisecond)); n++ {
		g.Go(func() error {
			return run(1, workload.OnceSpec{ID: fmt.Sprintf("1.%d", n), Key: "k", TTL: restartCommandTTL, Wait: 0, Hold: 100 * time.Millisecond})
		})
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), g.Wait())
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	recs, err := cmds.Records()
	if err != nil {
		return err
	}
	workload.RecordJobs(e.History, recs, time.Now())
	c := r.Checked()
	r.Check("no overlap", c.Safe(), "%d overlaps of the jobs", len(c.Overlaps))
	r.Check("B's waiting run gets the lock", cmds.Started("1.1"), "exit statuses %v", runs)
	r.Logf("exit statuses: %v", runs)
	return nil
}

// commandTTL is the TTL of the command's locks: its guardian kills a job
// whose lock is not renewed TTL/10 before the validity ends, the margin the
// next job's start has over that kill.
const commandTTL = time.Second

// safeCommand runs several "redlock run" processes per key against the
// masters, through the proxies, with jobs that do their worst.
func safeCommand(ctx context.Context, r *Run) error {
	cmds, err := workload.BuildCommands(ctx)
	if err != nil {
		return err
	}
	defer cmds.Close()
	clients := max(r.Clients(), workload.CommandProbeSlots)
	e, err := r.Env(ctx, workload.EnvConfig{Clients: clients})
	if err != nil {
		return err
	}
	d := r.Duration(3, 2*time.Second)
	// Faults that keep the masters' data: the command renews its locks
	// for as long as its job runs.
	sched := fault.Random(r.Seed, fault.RandomConfig{
		Nodes: Nodes, Clients: clients, Duration: d,
		Kinds: []fault.Kind{fault.Pause, fault.Cut, fault.Slow, fault.Reset, fault.DropReply},
		Gap:   150 * time.Millisecond, Hold: 400 * time.Millisecond, Latency: 20 * time.Millisecond,
	})
	r.Logf("%d faults scheduled over %v; TTL %v; then the probes", sched.Injections(), d, commandTTL)
	stats, err := workload.RunCommands(ctx, e, cmds, workload.CommandConfig{
		Keys: 2, TTL: commandTTL, Hold: 300 * time.Millisecond, LongHold: 5 * commandTTL / 2, KillAfter: 300 * time.Millisecond,
		Kill: 0.25, Cut: 0.2, Duration: d, Faults: sched, Seed: r.Seed,
	})
	if err != nil {
		return err
	}
	// Every redlock has ended; the guardians of the killed ones have the
	// validity of their last lock at most to end their jobs.
	end, left, err := cmds.AwaitJobsEnded(ctx, commandTTL+2*time.Second)
	if err != nil {
		return err
	}
	recs, err := cmds.Records()
	if err != nil {
		return err
	}
	if len(left) > 0 {
		cmds.KillJobs(recs)
	}
	workload.RecordJobs(e.History, recs, end)

	overlaps := recs.Overlaps()
	firstOverlap := ""
	if len(overlaps) > 0 {
		firstOverlap = "; first: " + overlaps[0].String()
	}
	r.Check("no two jobs at once", len(overlaps) == 0, "%d of %d jobs started while another job of their key still ran%s",
		len(overlaps), len(recs.Jobs), firstOverlap)
	r.Check("no job outlives the run", len(left) == 0, "%d jobs still had a live process %v after every redlock ended", len(left), left)
	r.Check("redlock exits as documented", len(stats.Unexpected) == 0, "%d unexpected exits%s", len(stats.Unexpected), firstOf(stats.Unexpected))
	r.Check("jobs ran", len(recs.Jobs) >= 3, "%d jobs in %v: %d runs done, %d lost (75), %d not acquired, %d found too few masters",
		len(recs.Jobs), d, stats.Done, stats.Lost, stats.Conflict, stats.Unavailable)
	r.Check("probes", len(stats.ProbeFailures) == 0, "probes %v%s", stats.Probes, firstOf(stats.ProbeFailures))
	r.Check("redlock killed", stats.Killed > 0, "%d redlock processes killed with SIGKILL while their job ran", stats.Killed)
	c := r.Checked()
	r.Check("fences increase", c.ByInvariant()[checker.FenceIncreases] == 0, "%d tokens out of order%s",
		c.ByInvariant()[checker.FenceIncreases], first(c, checker.FenceIncreases))
	r.Check("locks lost", stats.Lost > 0, "%d runs lost their lock while their job ran (exit 75)", stats.Lost)
	r.Check("faults injected", e.Faults.Injected() > 0, "%d faults, %d cuts of every link of a slot while its job ran", e.Faults.Injected(), stats.Cuts)
	return nil
}

// firstOf describes the first of list, if any.
func firstOf(list []string) string {
	if len(list) == 0 {
		return ""
	}
	return fmt.Sprintf("; first: %s", list[0])
}
