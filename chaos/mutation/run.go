package mutation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Config configures Run.
type Config struct {
	// Root is the repository's root, the tree to copy.
	Root string
	// Defects are the defects to apply, one at a time, in order.
	Defects []Defect
	// AllScenarios runs the whole short suite for the baseline and every
	// defect, instead of the scenarios each defect names.
	AllScenarios bool
	// Timeout bounds one `go test` run; 0 means 5 minutes.
	Timeout time.Duration
	// Keep keeps the temporary copy (and the logs in it) after the run.
	Keep bool
	// Progress, if not nil, gets a line per run as it starts and ends.
	Progress io.Writer
	// SkipBaseline skips the run without a defect, for a caller that has
	// just run the same scenarios on the same tree and seen them pass
	// (scripts/test-all.sh: the chaos module's tests). The report says it
	// was skipped.
	SkipBaseline bool
	// Parallel is how many defects run at once, each in a copy of its
	// own; 0 means 1. The baseline always runs alone.
	Parallel int
	// Rate, when > 0, measures catch rates: every defect's scenarios run
	// Rate times, all of them (no -failfast), and each Result says in how
	// many of those runs a scenario failed (Result.Rate).
	Rate int
}

// Outcome is what became of one run.
type Outcome string

// The outcomes. For the baseline, Missed means it passed.
const (
	Caught Outcome = "caught" // a scenario failed
	Missed Outcome = "MISSED" // every scenario passed
	Broken Outcome = "BROKEN" // the tests did not run: build error, unknown scenario, timeout
)

// Result is the outcome of one run: the baseline or one defect.
type Result struct {
	// Defect is the defect applied (zero for the baseline).
	Defect Defect
	// Scenarios are the scenarios that were asked for (nil: all).
	Scenarios []string
	// Failed are the scenarios that failed.
	Failed  []string
	Outcome Outcome
	// Detail says why a run is Broken.
	Detail  string
	Elapsed time.Duration
	// Log is the file holding the run's `go test` output (gone unless
	// Config.Keep).
	Log string
	// Runs and Failing are, when Config.Rate measured them, how many
	// times the scenarios ran, and in how many of those runs one failed.
	Runs, Failing int
}

// Report is the outcome of Run.
type Report struct {
	Baseline Result
	Results  []Result
	Dir      string // the temporary copy
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

// OK reports whether the baseline passed and every defect was caught,
// those caught only by chance (Defect.Chance) aside: their miss is work
// left, which the report lists, not a failure of this run.
func (r *Report) OK() bool {
	if r.Baseline.Outcome != Missed || len(r.Results) == 0 {
		return false
	}
	for _, res := range r.Results {
		if res.Outcome != Caught && (res.Outcome == Broken || res.Defect.Chance == "") {
			return false
		}
	}
	return true
}

// Run copies the tree at cfg.Root to a temporary directory, checks every
// defect's anchors there (any stale anchor fails the run at once), runs
// the baseline, and then the defects, cfg.Parallel at a time, each in a
// copy of the tree of its own: apply, run its scenarios, restore. It
// stops after the baseline if that does not pass. The error is for a run
// that could not be set up or was cancelled, not for a defect that was
// missed.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	start := time.Now()
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Minute
	}
	dir, err := os.MkdirTemp("", "quorumlock-mutation-")
	if err != nil {
		return nil, fmt.Errorf("mutation: %w", err)
	}
	if !cfg.Keep {
		defer os.RemoveAll(dir)
	}
	rep := &Report{Dir: dir}
	if _, err := CopyTree(ctx, cfg.Root, dir); err != nil {
		return nil, err
	}
	var bad []error
	for _, d := range cfg.Defects {
		bad = append(bad, d.Check(dir))
	}
	if err := errors.Join(bad...); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, dir: dir}
	if cfg.SkipBaseline {
		rep.Baseline = Result{Scenarios: r.scenarios(Defect{}), Outcome: Missed, Detail: baselineSkipped}
	} else {
		rep.Baseline = r.run(ctx, baseline, r.scenarios(Defect{}), 1)
	}
	if rep.Baseline.Outcome != Missed {
		rep.Elapsed = time.Since(start)
		return rep, ctx.Err()
	}
	runners := []*runner{r}
	for i := 1; i < min(cfg.Parallel, len(cfg.Defects)); i++ {
		sub, err := os.MkdirTemp("", "quorumlock-mutation-")
		if err != nil {
			return rep, fmt.Errorf("mutation: %w", err)
		}
		if !cfg.Keep {
			defer os.RemoveAll(sub)
		}
		if _, err := CopyTree(ctx, cfg.Root, sub); err != nil {
			return rep, err
		}
		runners = append(runners, &runner{cfg: cfg, dir: sub})
	}
	rep.Results = make([]Result, len(cfg.Defects))
	next := make(chan int)
	errs := make([]error, len(runners))
	var wg sync.WaitGroup
	for w, r := range runners {
		wg.Go(func() {
			for i := range next {
				if errs[w] == nil {
					rep.Results[i], errs[w] = r.defect(ctx, cfg.Defects[i])
				}
			}
		})
	}
	for i := range cfg.Defects {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	rep.Results = slices.DeleteFunc(rep.Results, func(res Result) bool { return res.Defect.Name == "" }) // not run
	rep.Elapsed = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return rep, err
	}
	return rep, ctx.Err()
}

// defect applies d to the runner's copy, runs its scenarios, and
// restores the copy.
func (r *runner) defect(ctx context.Context, d Defect) (Result, error) {
	restore, err := d.Apply(r.dir)
	if err != nil {
		return Result{}, err
	}
	runs := max(d.Runs, 1)
	if r.cfg.Rate > 0 {
		runs = r.cfg.Rate
	}
	res := r.run(ctx, d.Name, r.scenarios(d), runs)
	res.Defect = d
	if err := restore(); err != nil {
		return res, fmt.Errorf("mutation: restore after %s: %w", d.Name, err)
	}
	return res, nil
}

// runner runs the scenarios of one copy of the tree.
type runner struct {
	cfg Config
	dir string
}

// scenarios returns what to run for d: its scenarios, or for the baseline
// (the zero Defect) the union of every defect's; nil means all.
func (r *runner) scenarios(d Defect) []string {
	if r.cfg.AllScenarios {
		return nil
	}
	if d.Name != "" {
		return d.Scenarios
	}
	var all []string
	for _, d := range r.cfg.Defects {
		all = append(all, d.Scenarios...)
	}
	slices.Sort(all)
	return slices.Compact(all)
}

// baseline is the name of the run without a defect.
const baseline = "baseline"

// baselineSkipped is the Detail of a baseline that Config.SkipBaseline
// skipped.
const baselineSkipped = "skipped: the caller ran these scenarios unmutated"

// run runs the short scenarios of the copy, on the local backend, up to
// runs times, and judges the outcome.
func (r *runner) run(ctx context.Context, name string, scenarios []string, runs int) Result {
	res := Result{Scenarios: scenarios, Log: filepath.Join(r.dir, "mutation-"+name+".log")}
	if r.cfg.Progress != nil {
		fmt.Fprintf(r.cfg.Progress, "mutation: %-28s running %s\n", name, orAll(scenarios))
	}
	start := time.Now()
	measure := r.cfg.Rate > 0 && name != baseline
	out, err := r.goTest(ctx, scenarios, runs, !measure)
	res.Elapsed = time.Since(start)
	os.WriteFile(res.Log, out, 0o644)
	res.Failed, res.Outcome, res.Detail = judge(out, err, scenarios)
	if measure {
		res.Runs, res.Failing = runs, len(topFail.FindAll(out, -1))
	}
	if r.cfg.Progress != nil {
		outcome := string(res.Outcome)
		if name == baseline && res.Outcome == Missed {
			outcome = "pass" // as the report says: nothing failed
		}
		fmt.Fprintf(r.cfg.Progress, "mutation: %-28s %s %s in %v\n", name, outcome,
			strings.Join(res.Failed, ","), res.Elapsed.Round(100*time.Millisecond))
	}
	return res
}

// Pattern returns the -run pattern of the short scenarios on the local
// backend: the named ones, or all of them for nil.
func Pattern(scenarios []string) string {
	p := "^TestScenarios$/^local$/"
	if scenarios == nil {
		return p
	}
	quoted := make([]string, len(scenarios))
	for i, s := range scenarios {
		quoted[i] = regexp.QuoteMeta(s)
	}
	return p + "^(" + strings.Join(quoted, "|") + ")$"
}

// goTest runs `go test` on the scenarios of the copy's chaos module, runs
// times over (with failfast, -failfast ends them at the first failure).
func (r *runner) goTest(ctx context.Context, scenarios []string, runs int, failfast bool) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout*time.Duration(runs))
	defer cancel()
	// -parallel 1: the scenarios of one defect one after another, as
	// their catches were measured (the self-test runs defects at once
	// instead, each in a copy).
	args := []string{"test", "-count=" + strconv.Itoa(runs), "-v", "-parallel", "1", "-timeout", (r.cfg.Timeout * time.Duration(runs)).String(),
		"-run", Pattern(scenarios), "./scenario"}
	if failfast {
		args = append(args, "-failfast")
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = filepath.Join(r.dir, "chaos")
	// A defect that hangs a scenario is caught by its watchdog: a short
	// one (the short scenarios take seconds) keeps a hang from costing
	// the default's two minutes.
	cmd.Env = append(os.Environ(), "QUORUMLOCK_CHAOS_DOCKER=0", "QUORUMLOCK_CHAOS_WATCHDOG="+watchdog.String())
	// Its own process group, so that a timeout ends the test binary (and
	// with it, by Pdeathsig, its redis-servers) along with go itself.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("mutation: go test: %w", ctx.Err())
	}
	return out.Bytes(), err
}

// watchdog is the scenarios' watchdog in the self-test's runs: several
// times the longest short scenario.
const watchdog = 45 * time.Second

var (
	topFail  = regexp.MustCompile(`(?m)^--- FAIL: TestScenarios `) // one per failing run
	failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: TestScenarios/local/(\S+)`)
	passLine = regexp.MustCompile(`(?m)^\s*--- PASS: TestScenarios/local/(\S+)`)
	runLine  = regexp.MustCompile(`(?m)^=== RUN\s+TestScenarios/local/(\S+)`)
)

// judge reads the output of one `go test` run: the scenarios that failed,
// and the outcome. A run that passed without running every scenario asked
// for (a name that does not exist) is Broken, not Missed.
func judge(out []byte, err error, scenarios []string) ([]string, Outcome, string) {
	var failed []string
	for _, m := range failLine.FindAllSubmatch(out, -1) {
		failed = append(failed, string(m[1]))
	}
	switch {
	case len(failed) > 0:
		return failed, Caught, ""
	case err == nil:
		passed := map[string]bool{}
		for _, m := range passLine.FindAllSubmatch(out, -1) {
			passed[string(m[1])] = true
		}
		var missing []string
		for _, s := range scenarios {
			if !passed[s] {
				missing = append(missing, s)
			}
		}
		if len(missing) > 0 || len(passed) == 0 {
			return nil, Broken, "no such scenario: " + strings.Join(missing, ",")
		}
		return nil, Missed, ""
	case bytes.Contains(out, []byte("panic:")) || bytes.Contains(out, []byte("fatal error:")):
		// A panic, or a fatal error of the runtime (concurrent map
		// writes), ends the binary before the subtest reports: blame the
		// last scenario that started.
		why := " (panic)"
		switch {
		case bytes.Contains(out, []byte("panic: test timed out")):
			why = " (hung)"
		case !bytes.Contains(out, []byte("panic:")):
			why = " (fatal error)"
		}
		if runs := runLine.FindAllSubmatch(out, -1); len(runs) > 0 {
			return []string{string(runs[len(runs)-1][1]) + why}, Caught, ""
		}
	}
	return nil, Broken, firstLines(out, err, 6)
}

// firstLines returns err and the first n lines of out, on one line.
func firstLines(out []byte, err error, n int) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return fmt.Sprintf("%v: %s", err, strings.Join(lines, " | "))
}

func orAll(scenarios []string) string {
	if scenarios == nil {
		return "all short scenarios"
	}
	return strings.Join(scenarios, ",")
}
