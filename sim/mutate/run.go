package mutate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/mutation"
)

// Config configures Run.
type Config struct {
	// Root is the repository's root, the tree to copy.
	Root string
	// Defects are the defects to apply, one at a time.
	Defects []mutation.Defect
	// Budget bounds each exploration (wall clock); 0 means 60s.
	Budget time.Duration
	// Workers is the number of simulator processes per exploration; 0
	// means 1.
	Workers int
	// Args are further flags for the simulator (--kinds, ...).
	Args []string
	// SkipBaseline skips the exploration of the tree without a defect.
	SkipBaseline bool
	// Progress, if set, gets a line per run.
	Progress io.Writer
	// Keep keeps the copy of the tree.
	Keep bool
}

// Outcome is what became of one run.
type Outcome string

// The outcomes; for the baseline, Missed means it passed.
const (
	Caught Outcome = "caught" // a schedule failed
	Missed Outcome = "MISSED" // every schedule within the budget passed
	Broken Outcome = "BROKEN" // the simulator did not build or run
	Stale  Outcome = "STALE"  // an anchor is not in the tree (the library changed)
)

// Result is one run: the baseline or a defect.
type Result struct {
	Defect  mutation.Defect
	Outcome Outcome
	// Detail says why a run is Broken or Stale.
	Detail string
	// After is how long the exploration took to catch the defect (or
	// ran, when missed); Schedules how many schedules it ran (of the
	// workers that reported), Seed the failing seed and Failure how it
	// failed.
	After     time.Duration
	Schedules int
	Seed      uint64
	Failure   string
	Signature []string
	// Build is how long building the mutated simulator took.
	Build time.Duration
}

// Report is the outcome of Run.
type Report struct {
	Baseline Result
	Results  []Result
	Dir      string
	Elapsed  time.Duration
}

// Caught counts the defects caught.
func (r *Report) Caught() int {
	n := 0
	for _, res := range r.Results {
		if res.Outcome == Caught {
			n++
		}
	}
	return n
}

// OK reports whether the baseline passed (or was skipped) and every
// defect that could be applied was caught.
func (r *Report) OK() bool {
	if r.Baseline.Outcome != Missed && r.Baseline.Outcome != "" {
		return false
	}
	for _, res := range r.Results {
		if res.Outcome != Caught && res.Outcome != Stale {
			return false
		}
	}
	return len(r.Results) > 0
}

// Run copies the tree, runs the baseline, then each defect: apply it,
// build the simulator from the copy, explore until a schedule fails or
// the budget ends, restore.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Budget <= 0 {
		cfg.Budget = time.Minute
	}
	cfg.Workers = max(cfg.Workers, 1)
	dir, err := os.MkdirTemp("", "quorumlock-sim-mutate-")
	if err != nil {
		return nil, err
	}
	rep := &Report{Dir: dir}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	tree := filepath.Join(dir, "tree")
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return nil, err
	}
	if _, err := mutation.CopyTree(ctx, cfg.Root, tree); err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, "sim")
	if !cfg.SkipBaseline {
		rep.Baseline = explore(ctx, cfg, tree, bin, mutation.Defect{Name: "baseline"})
		progress(cfg, rep.Baseline)
		if rep.Baseline.Outcome != Missed {
			rep.Elapsed = time.Since(start)
			return rep, nil
		}
	}
	for _, d := range cfg.Defects {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var res Result
		if err := d.Check(tree); err != nil {
			res = Result{Defect: d, Outcome: Stale, Detail: err.Error()}
		} else {
			restore, err := d.Apply(tree)
			if err != nil {
				res = Result{Defect: d, Outcome: Stale, Detail: err.Error()}
			} else {
				res = explore(ctx, cfg, tree, bin, d)
				if err := restore(); err != nil {
					return rep, fmt.Errorf("mutate: restore %s: %w", d.Name, err)
				}
				if x, ok := extra(d.Name); ok && res.Outcome == Broken && x.Check(tree) == nil {
					// chaos/mutation's edit does not build (the library
					// changed under it): the simulator's own, if it has one.
					broken := res.Detail
					if restore, err := x.Apply(tree); err == nil {
						res = explore(ctx, cfg, tree, bin, x)
						res.Detail = "chaos/mutation's edit does not build (" + lastLines(broken, 1) + "); ran the simulator's own. " + res.Detail
						if err := restore(); err != nil {
							return rep, fmt.Errorf("mutate: restore %s: %w", d.Name, err)
						}
					}
				}
			}
		}
		rep.Results = append(rep.Results, res)
		progress(cfg, res)
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func progress(cfg Config, r Result) {
	if cfg.Progress == nil {
		return
	}
	switch r.Outcome {
	case Caught:
		fmt.Fprintf(cfg.Progress, "%-40s caught after %v (seed %d): %s\n", r.Defect.Name, r.After.Round(100*time.Millisecond), r.Seed, strings.Join(r.Signature, ", "))
	case Missed:
		what := string(r.Outcome)
		if r.Defect.Name == "baseline" {
			what = "pass"
		}
		fmt.Fprintf(cfg.Progress, "%-40s %s: %d schedules in %v, none failed\n", r.Defect.Name, what, r.Schedules, r.After.Round(time.Second))
	default:
		fmt.Fprintf(cfg.Progress, "%-40s %s: %s\n", r.Defect.Name, r.Outcome, r.Detail)
	}
}

// report is the simulator's --json summary (cmd/sim's Report).
type report struct {
	Schedules, Failed int
	FirstSeed         uint64
	FirstAfter        time.Duration
	FirstSummary      string
	FirstSignature    []string
	Wall              time.Duration
}

// explore builds the simulator in tree and explores with it.
func explore(ctx context.Context, cfg Config, tree, bin string, d mutation.Defect) Result {
	res := Result{Defect: d}
	t0 := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./sim/cmd/sim")
	build.Dir = tree
	if out, err := build.CombinedOutput(); err != nil {
		res.Outcome, res.Detail = Broken, "build: "+lastLines(string(out), 6)
		return res
	}
	res.Build = time.Since(t0)
	args := append([]string{"--duration", cfg.Budget.String(), "--workers", strconv.Itoa(cfg.Workers), "--stop", "--shrink=false", "--json", "--quiet"}, cfg.Args...)
	run := exec.CommandContext(ctx, bin, args...)
	run.Dir = tree
	var stderr bytes.Buffer
	run.Stderr = &stderr
	out, err := run.Output()
	var rep *report
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if text, ok := strings.CutPrefix(sc.Text(), "SIMJSON "); ok {
			var r report
			if json.Unmarshal([]byte(text), &r) == nil {
				rep = &r
			}
		}
	}
	if rep == nil {
		var ee *exec.ExitError
		detail := "no summary"
		if errors.As(err, &ee) {
			detail = fmt.Sprintf("exit %d", ee.ExitCode())
		}
		res.Outcome, res.Detail = Broken, detail+": "+lastLines(stderr.String(), 8)
		return res
	}
	res.Schedules = rep.Schedules
	if rep.FirstSummary == "" && rep.Failed == 0 {
		res.Outcome, res.After = Missed, rep.Wall
		return res
	}
	res.Outcome, res.After, res.Seed, res.Failure, res.Signature = Caught, rep.FirstAfter, rep.FirstSeed, rep.FirstSummary, rep.FirstSignature
	return res
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// extra returns the simulator's own defect named name.
func extra(name string) (mutation.Defect, bool) {
	for _, d := range Extra() {
		if d.Name == name {
			return d, true
		}
	}
	return mutation.Defect{}, false
}
