package workload

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/quorumlock/quorumlock/chaos/fault"
)

// The redlock command as a chaos client. Each client of the Env is a slot
// that runs "redlock run" (the real command, built from this repository by
// BuildCommands) again and again, through that client's proxies, on a few
// shared keys. Its job is redlockjob (chaos/cmd/redlockjob): a leader that
// runs for a while, half of the time dying of SIGTERM at once and half of
// the time ignoring it, and in two jobs of three a worker that ignores
// SIGTERM and never ends by itself, in the job's process group or in a
// session of its own (setsid). Each run draws its fate: most end by
// themselves; in some, once the job runs, the slot kills redlock with
// SIGKILL; in others the slot's links to every master are cut for longer
// than the TTL, so that the lock is lost while a long job runs.
//
// The jobs record the invariant themselves (see redlockjob): a job that
// starts while a process of another job of its key still runs says so, and
// the kernel's flock decides it, so that a job killed with SIGKILL, which
// writes nothing more, cannot hide.

// CommandConfig shapes RunCommands.
type CommandConfig struct {
	// Keys is the number of keys the slots compete for; 0 means 2.
	Keys int
	// TTL is redlock's --ttl, NodeTimeout its --node-timeout (0:
	// NodeTimeout), Wait its -w (0: 1s).
	TTL, NodeTimeout, Wait time.Duration
	// Hold is the longest a job's leader runs (uniform in [0, Hold]),
	// except for one job in three, which runs LongHold (uniform in
	// [LongHold/2, LongHold]): past the TTL, renewed, and the jobs the
	// cutter picks. KillAfter is the longest --kill-after (each run draws
	// from [KillAfter/8, KillAfter]).
	Hold, LongHold, KillAfter time.Duration
	// Kill and Cut are the shares of the runs whose redlock is killed with
	// SIGKILL (at a random moment within Hold once the job runs) and whose
	// slot is cut off from every master (a random moment within TTL/4 once
	// its job runs, which is a long one, for CutFor; 0: 3 TTL/2).
	Kill, Cut float64
	CutFor    time.Duration
	// Faults, if set, is injected beside the slots (Env.Faults.Run).
	Faults fault.Schedule
	// Duration is the length of the random phase, before the probes.
	Duration time.Duration
	// Seed drives every choice of the slots.
	Seed uint64
}

// CommandStats counts what the redlock processes of a run did.
type CommandStats struct {
	// Runs counts the redlock processes started; Done those that exited
	// with their job's status 0, Conflict those that did not get the lock
	// in time, Lost those that exited 75, Unavailable those that found
	// too few masters (69), Killed those killed with SIGKILL while their
	// job ran.
	Runs, Done, Conflict, Lost, Unavailable, Killed int
	// Cuts counts the runs whose slot was cut off from every master while
	// their job ran.
	Cuts int
	// Unexpected describes the runs that ended otherwise.
	Unexpected []string
	// Probes names the probes run; ProbeFailures describes those whose
	// runs did not end as they must.
	Probes        []string
	ProbeFailures []string
}

// Exit statuses of the slots' redlock runs (-E conflictStatus).
const (
	conflictStatus    = 3
	lostStatus        = 75
	unavailableStatus = 69
)

// Commands are the binaries of the command's chaos client and the
// directory where the jobs of a run record what they did.
type Commands struct {
	// Dir holds the jobs' records (see redlockjob).
	Dir          string
	root         string
	redlock, job string
}

// BuildCommands builds redlock and redlockjob from the sources of this
// module and its parent (go build, so it needs the go command on PATH)
// into a new temporary directory, which Close removes.
func BuildCommands(ctx context.Context) (*Commands, error) {
	root, err := os.MkdirTemp("", "chaos-command-")
	if err != nil {
		return nil, err
	}
	c := &Commands{Dir: filepath.Join(root, "run"), root: root,
		redlock: filepath.Join(root, "bin", "redlock"), job: filepath.Join(root, "bin", "redlockjob")}
	for _, d := range []string{filepath.Join(c.Dir, "jobs"), filepath.Join(c.Dir, "workers"), filepath.Join(c.Dir, "runs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			c.Close()
			return nil, err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(root, "bin")+string(filepath.Separator),
		"github.com/quorumlock/quorumlock/cmd/redlock", "github.com/quorumlock/quorumlock/chaos/cmd/redlockjob")
	cmd.Dir = moduleDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		c.Close()
		return nil, fmt.Errorf("workload: building the command: %v\n%s", err, out)
	}
	return c, nil
}

// Close removes the binaries and the records.
func (c *Commands) Close() error { return os.RemoveAll(c.root) }

// moduleDir is the chaos module's directory, where go build finds both
// packages: the one this file was compiled from when it is still there,
// else the working directory (go run ./cmd/chaos and go test run there).
func moduleDir() string {
	if _, file, _, ok := runtime.Caller(0); ok {
		dir := filepath.Dir(filepath.Dir(file))
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
	}
	return ""
}

// RunCommands runs the slots and cfg.Faults for cfg.Duration, waits for the
// redlock processes still running (their runs end by themselves: a job
// holds at most LongHold, a wait lasts at most Wait), heals every fault,
// and then runs the probes (see probes). It returns a harness error
// (redlock could not be started, a fault could not be applied), not what
// the runs did: that is in the stats and in the jobs' records.
func RunCommands(ctx context.Context, e *Env, c *Commands, cfg CommandConfig) (CommandStats, error) {
	if cfg.Keys <= 0 {
		cfg.Keys = 2
	}
	if cfg.NodeTimeout <= 0 {
		cfg.NodeTimeout = NodeTimeout
	}
	if cfg.Wait <= 0 {
		cfg.Wait = time.Second
	}
	if cfg.CutFor <= 0 {
		cfg.CutFor = 3 * cfg.TTL / 2
	}
	if len(e.clients) < CommandProbeSlots {
		return CommandStats{}, fmt.Errorf("workload: the command's probes need %d clients, not %d", CommandProbeSlots, len(e.clients))
	}
	r := &commandRun{e: e, c: c, cfg: cfg}
	for i := range e.clients {
		r.slot = append(r.slot, &slot{id: i, nodes: nodesURL(e.Net.Addrs(i), e.Cluster.Password())})
	}
	wctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	g, gctx := errgroup.WithContext(wctx)
	if len(cfg.Faults) > 0 {
		g.Go(func() error { return e.Faults.Run(gctx, cfg.Faults) })
	}
	for _, s := range r.slot {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(s.id)+0xc0de))
		g.Go(func() error {
			for gctx.Err() == nil {
				if _, err := r.run(s, r.draw(rng)); err != nil {
					return err
				}
			}
			return nil
		})
	}
	err := g.Wait()
	if err == nil {
		err = e.Faults.HealAll(ctx)
	}
	if err == nil {
		err = r.probes(ctx)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats, err
}

// nodesURL is redlock's --nodes for the proxies at addrs.
func nodesURL(addrs []string, password string) string {
	list := make([]string, len(addrs))
	for i, a := range addrs {
		list[i] = a
		if password != "" {
			list[i] = (&url.URL{Scheme: "redis", User: url.UserPassword("", password), Host: a}).String()
		}
	}
	return strings.Join(list, ",")
}
