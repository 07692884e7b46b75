package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/chaos/fault"
)

// One redlock run of the command's chaos client: what it runs, what
// happens to it, and how it ended.

// slot is one client of the Env running redlock.
type slot struct {
	id    int
	nodes string // --nodes, through the client's proxies
}

// commandRun is the state of RunCommands.
type commandRun struct {
	e    *Env
	c    *Commands
	cfg  CommandConfig
	slot []*slot
	next atomic.Int64 // the last job id's number

	mu    sync.Mutex
	stats CommandStats
}

// The fates of a run.
const (
	fateNone = iota // it ends by itself
	fateKill        // redlock is killed with SIGKILL while its job runs
	fateCut         // the slot is cut off from every master while its job runs
)

// runSpec is one redlock run: its key, its job, and its fate.
type runSpec struct {
	key             string
	hold, killAfter time.Duration
	wait            time.Duration
	term, worker    string        // redlockjob's TERM and WORKER
	fate            int           // what strikes once its job runs ...
	after           time.Duration // ... this long after it started
}

// How a run ended.
const (
	endDone        = "done"
	endConflict    = "conflict"
	endLost        = "lost"
	endUnavailable = "unavailable"
	endKilled      = "killed"
	endUnexpected  = "unexpected"
)

// draw draws a run of the random phase.
func (r *commandRun) draw(rng *rand.Rand) runSpec {
	cfg := r.cfg
	sp := runSpec{key: r.e.Key("cmd" + strconv.Itoa(rng.IntN(cfg.Keys))), wait: cfg.Wait}
	switch p := rng.Float64(); {
	case p < cfg.Kill:
		sp.fate = fateKill
	case p < cfg.Kill+cfg.Cut:
		sp.fate = fateCut
	}
	sp.hold = time.Duration(rng.Int64N(int64(cfg.Hold) + 1))
	if sp.fate == fateCut || rng.IntN(3) == 0 {
		sp.hold = cfg.LongHold/2 + time.Duration(rng.Int64N(int64(cfg.LongHold/2)+1))
	}
	sp.after = time.Duration(rng.Int64N(int64(cfg.Hold) + 1))
	if sp.fate == fateCut {
		sp.after = time.Duration(rng.Int64N(int64(cfg.TTL/4) + 1))
	}
	sp.killAfter = cfg.KillAfter/8 + time.Duration(rng.Int64N(int64(cfg.KillAfter-cfg.KillAfter/8)+1))
	sp.term = []string{"exit", "ignore"}[rng.IntN(2)]
	sp.worker = []string{"none", "group", "setsid"}[rng.IntN(3)]
	return sp
}

// newID returns the id of a new job of slot s.
func (r *commandRun) newID(s *slot) string {
	return fmt.Sprintf("%d.%d", s.id, r.next.Add(1))
}

// run runs redlock once in slot s and returns how it ended, and a harness
// error.
func (r *commandRun) run(s *slot, sp runSpec) (string, error) {
	return r.runAs(s, r.newID(s), sp)
}

// runAs runs redlock once in slot s, as job id.
func (r *commandRun) runAs(s *slot, id string, sp runSpec) (string, error) {
	cfg := r.cfg
	errf, err := os.Create(filepath.Join(r.c.Dir, "runs", id))
	if err != nil {
		return "", err
	}
	defer errf.Close()
	// Not tied to a context: a run ends by itself, and the run waits
	// for it.
	cmd := exec.Command(r.c.redlock, "run", "--nodes", s.nodes, "--node-timeout", cfg.NodeTimeout.String(),
		"--ttl", cfg.TTL.String(), "--kill-after", sp.killAfter.String(), "--fence",
		"-E", strconv.Itoa(conflictStatus), "-w", sp.wait.String(), sp.key, "--",
		r.c.job, r.c.Dir, id, sp.key, sp.hold.String(), sp.term, sp.worker)
	cmd.Stderr = errf // a file: the job's processes hold no pipe of ours
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("workload: starting redlock: %w", err)
	}
	exited := make(chan struct{})
	var struck bool
	var ferr error
	var wg sync.WaitGroup
	if sp.fate != fateNone {
		wg.Go(func() { struck, ferr = r.strike(s, cmd, id, sp, exited) })
	}
	werr := cmd.Wait()
	close(exited)
	wg.Wait()
	return r.count(id, cmd.ProcessState, sp.fate, struck, werr), ferr
}

// strike waits until job id runs (its worker too) and then for sp.after,
// and then kills its redlock or cuts its slot off (for CutFor, or until the
// run exited). It reports whether it did, before the run exited by itself.
func (r *commandRun) strike(s *slot, cmd *exec.Cmd, id string, sp runSpec, exited <-chan struct{}) (bool, error) {
	for !r.c.started(id, sp.worker != "none") {
		if !waitOrClosed(exited, 5*time.Millisecond) {
			return false, nil
		}
	}
	if !waitOrClosed(exited, sp.after) {
		return false, nil
	}
	if sp.fate == fateKill {
		return cmd.Process.Signal(syscall.SIGKILL) == nil, nil
	}
	ctx := context.Background() // the cut is undone whatever happens to the run
	if err := r.link(ctx, fault.Cut, s.id); err != nil {
		return false, err
	}
	waitOrClosed(exited, r.cfg.CutFor)
	return true, r.link(ctx, fault.Heal, s.id)
}

// waitOrClosed waits d or until c is closed, and reports whether d passed.
func waitOrClosed(c <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c:
		return false
	case <-t.C:
		return true
	}
}

// link applies kind to every link of client c.
func (r *commandRun) link(ctx context.Context, kind fault.Kind, c int) error {
	var errs []error
	for j := range r.e.Cluster.Nodes() {
		errs = append(errs, r.e.Faults.Apply(ctx, fault.Fault{Kind: kind, Node: j, Clients: []int{c}}))
	}
	return errors.Join(errs...)
}

// count records how run id, of fate, ended, and returns it: struck tells
// whether its fate struck before it exited.
func (r *commandRun) count(id string, ps *os.ProcessState, fate int, struck bool, werr error) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := &r.stats
	st.Runs++
	if struck && fate == fateCut {
		st.Cuts++
	}
	status := -1
	if ps != nil {
		status = ps.ExitCode()
	}
	switch {
	case struck && fate == fateKill:
		st.Killed++
		return endKilled
	case status == 0:
		st.Done++
		return endDone
	case status == conflictStatus:
		st.Conflict++
		return endConflict
	case status == lostStatus:
		st.Lost++
		return endLost
	case status == unavailableStatus:
		st.Unavailable++
		return endUnavailable
	}
	out, _ := os.ReadFile(filepath.Join(r.c.Dir, "runs", id))
	st.Unexpected = append(st.Unexpected, fmt.Sprintf("run %s: %v: %s", id, werr, strings.TrimSpace(string(out))))
	return endUnexpected
}
