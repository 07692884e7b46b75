package scenario

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
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
	}}
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
