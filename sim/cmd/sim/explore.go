package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/sim"
	"github.com/quorumlock/quorumlock/sim/schedule"
)

// Workers. An exploration runs in worker processes, each on one core
// (GOMAXPROCS=1: a simulation is a chain of handoffs between goroutines,
// which a second core only slows down), worker i of n exploring the seeds
// from+i, from+i+n, ... Each writes a line per failing schedule and a
// summary, as JSON after the marker, on its standard output.

const marker = "SIMJSON "

// line is one line of a worker's output.
type line struct {
	Type     string             `json:"type"` // "failure" or "summary"
	Seed     uint64             `json:"seed,omitempty"`
	Summary  string             `json:"summary,omitempty"`
	Details  string             `json:"details,omitempty"`
	Sig      []string           `json:"signature,omitempty"`
	Schedule *schedule.Schedule `json:"schedule,omitempty"`
	Sum      *sum               `json:"sum,omitempty"`
}

// sum is a worker's summary.
type sum struct {
	Schedules, Failed, Ops, Grants int
	Virtual, Wall, CPU             time.Duration
}

func emit(w io.Writer, l line) {
	b, err := json.Marshal(l)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(w, "%s%s\n", marker, b)
}

// runWorker is a worker process's exploration.
func runWorker(t testingT, c config) {
	debug.SetGCPercent(400)
	i, n, err := parseWorker(c.worker)
	if err != nil {
		fatal("%v", err)
	}
	opts, err := c.options()
	if err != nil {
		fatal("%v", err)
	}
	var mu sync.Mutex
	e := sim.Explore{From: c.from + uint64(i), Step: uint64(n), Schedules: c.schedules, Budget: c.duration, Options: opts, StopAtFailure: c.stop, Runs: sim.Options{StrictLeftovers: c.strict},
		OnFailure: func(r *sim.Result, s *schedule.Schedule) {
			mu.Lock()
			defer mu.Unlock()
			emit(os.Stdout, line{Type: "failure", Seed: s.Seed, Summary: r.Summary(), Details: r.Details(), Sig: sim.Signature(r), Schedule: s})
		}}
	s := e.Run(t)
	emit(os.Stdout, line{Type: "summary", Sum: &sum{Schedules: s.Schedules, Failed: s.Failed, Ops: s.Ops, Grants: s.Grants, Virtual: s.Virtual, Wall: s.Wall, CPU: s.CPU}})
}

func parseWorker(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if ok {
		i, err = strconv.Atoi(a)
		if err == nil {
			n, err = strconv.Atoi(b)
		}
	}
	if !ok || err != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("bad --worker %q: want i/n", s)
	}
	return i, n, nil
}

// scheduleArgs are the flags that shape what c explores: the same for a
// worker, a replay child and the replay command a failure prints.
func (c config) scheduleArgs() []string {
	var args []string
	if c.kinds != "" {
		args = append(args, "--kinds", c.kinds)
	}
	if c.faults != "" {
		args = append(args, "--faults", c.faults)
	}
	if c.unsafe {
		args = append(args, "--unsafe")
	}
	if c.masters > 0 {
		args = append(args, "--masters", strconv.Itoa(c.masters))
	}
	if c.theme != "" {
		args = append(args, "--theme", c.theme)
	}
	if c.noWarmup {
		args = append(args, "--no-warmup")
	}
	if c.persist != "" {
		args = append(args, "--persist", c.persist)
	}
	if c.tight {
		args = append(args, "--tight-renewals")
	}
	if !c.fencedRes {
		args = append(args, "--fenced-resume=false")
	}
	if !c.strict {
		args = append(args, "--strict-leftovers=false")
	}
	return args
}

// childArgs are the flags a worker or replay child gets from c: its
// budget first (runDefects drops it), then scheduleArgs and --stop.
func (c config) childArgs() []string {
	args := append([]string{"--duration", c.duration.String()}, c.scheduleArgs()...)
	if c.stop {
		args = append(args, "--stop")
	}
	return args
}

// outcome is what runExplore gathered from its workers.
type outcome struct {
	sum      sum
	failures []line
	first    line          // the first failure that came in
	firstAt  time.Duration // when it came, from the start
	err      error
}

// Report is the summary --json writes.
type Report struct {
	Schedules, Failed, Ops, Grants int
	Virtual, Wall, CPU             time.Duration
	// The first failure that came in: its seed, after how long, how it
	// failed.
	FirstSeed      uint64        `json:",omitempty"`
	FirstAfter     time.Duration `json:",omitempty"`
	FirstSummary   string        `json:",omitempty"`
	FirstSignature []string      `json:",omitempty"`
	FirstDetails   string        `json:",omitempty"`
}

// explore runs the workers of c with the binary bin and gathers their
// output; progress goes to progress (nil: none).
func explore(bin string, c config, progress io.Writer) outcome {
	var (
		mu    sync.Mutex
		out   outcome
		wg    sync.WaitGroup
		start = time.Now()
	)
	var cmds []*exec.Cmd
	stopAll := func() {
		for _, cmd := range cmds {
			if cmd.Process != nil {
				cmd.Process.Kill()
			}
		}
	}
	per := 0
	if c.schedules > 0 {
		per = (c.schedules + c.workers - 1) / c.workers
	}
	var pipes []io.Reader
	var stderrs []*tailWriter
	stopped := false
	for i := range c.workers {
		args := append([]string{"--worker", fmt.Sprintf("%d/%d", i, c.workers), "--from", strconv.FormatUint(c.from, 10), "--schedules", strconv.Itoa(per)}, c.childArgs()...)
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		tail := &tailWriter{}
		stderrs = append(stderrs, tail)
		cmd.Stderr = tail
		if progress != nil {
			cmd.Stderr = io.MultiWriter(os.Stderr, tail)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			stopAll()
			return outcome{err: err}
		}
		if err := cmd.Start(); err != nil {
			stopAll()
			return outcome{err: err}
		}
		cmds = append(cmds, cmd)
		pipes = append(pipes, stdout)
	}
	for i, stdout := range pipes {
		cmd := cmds[i]
		wg.Go(func() {
			summarised := false
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 1<<20), 64<<20)
			for sc.Scan() {
				text, ok := strings.CutPrefix(sc.Text(), marker)
				if !ok {
					continue
				}
				var l line
				if err := json.Unmarshal([]byte(text), &l); err != nil {
					continue
				}
				mu.Lock()
				switch l.Type {
				case "failure":
					if len(out.failures) == 0 {
						out.firstAt, out.first = time.Since(start), l
					}
					out.failures = append(out.failures, l)
					if progress != nil {
						fmt.Fprintf(progress, "FAIL %s\n%s", l.Summary, l.Details)
					}
					if c.stop {
						stopped = true
						stopAll() // the others' counts are lost with them
					}
				case "summary":
					summarised = true
					s := l.Sum
					out.sum.Schedules += s.Schedules
					out.sum.Failed += s.Failed
					out.sum.Ops += s.Ops
					out.sum.Grants += s.Grants
					out.sum.Virtual += s.Virtual
					out.sum.CPU += s.CPU
					out.sum.Wall = max(out.sum.Wall, s.Wall)
				}
				mu.Unlock()
			}
			err := cmd.Wait()
			mu.Lock()
			defer mu.Unlock()
			if !summarised && !stopped {
				// A worker that died (a panic on one of the library's
				// goroutines, a fatal error of the runtime) found
				// something too; its last schedule is not known.
				l := line{Type: "failure", Summary: fmt.Sprintf("worker %d died (%v): %s", i, err, lastLine(stderrs[i].String())), Details: stderrs[i].String(), Sig: []string{"crash"}}
				if len(out.failures) == 0 {
					out.firstAt, out.first = time.Since(start), l
				}
				out.failures = append(out.failures, l)
				if c.stop {
					stopped = true
					stopAll()
				}
			}
		})
	}
	wg.Wait()
	slices.SortFunc(out.failures, func(a, b line) int {
		switch {
		case a.Seed < b.Seed:
			return -1
		case a.Seed > b.Seed:
			return 1
		}
		return 0
	})
	return out
}

// runExplore explores with workers and reports; its exit status.
func runExplore(c config) int {
	if _, err := c.options(); err != nil {
		fatal("%v", err)
	}
	if c.from == 0 {
		c.from = uint64(time.Now().UnixNano()%1e9) * 1000
	}
	c.workers = max(c.workers, 1)
	bin, err := os.Executable()
	if err != nil {
		fatal("%v", err)
	}
	bound := fmt.Sprintf("for %v", c.duration)
	if c.schedules > 0 {
		bound = fmt.Sprintf("%d schedules (at most %v)", c.schedules, c.duration)
	}
	fmt.Printf("sim: exploring %s from seed %d with %d workers\n", bound, c.from, c.workers)
	var progress io.Writer = os.Stderr
	if c.quiet {
		progress = nil
	}
	o := explore(bin, c, progress)
	if o.err != nil {
		fatal("%v", o.err)
	}
	report(os.Stdout, c, o)
	if len(o.failures) == 0 {
		return 0
	}
	for i, f := range toShrink(c, o.failures) {
		what := "first failure"
		if i > 0 {
			what = "another failure"
		}
		fmt.Printf("\n%s: seed %d\n  replay: %s\n", what, f.Seed, replayCommand(c, f.Seed))
		if c.shrink {
			// The replay child measures how often the seed fails,
			// shrinks it and writes the shrunk schedule.
			args := append([]string{"--seed", strconv.FormatUint(f.Seed, 10), "--repeat", "10", "--out", c.out}, c.childArgs()...)
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
			cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
			cmd.Run()
		}
	}
	return 1
}

// toShrink are the failures to replay and shrink: the first; in a soak,
// the first of each distinct signature, five at most.
func toShrink(c config, failures []line) []line {
	if c.soak == 0 {
		return failures[:1]
	}
	var out []line
	seen := map[string]bool{}
	for _, f := range failures {
		if sig := strings.Join(f.Sig, "|"); !seen[sig] && len(out) < 5 {
			seen[sig] = true
			out = append(out, f)
		}
	}
	return out
}

// report prints an exploration's summary.
func report(w io.Writer, c config, o outcome) {
	s := o.sum
	if c.jsonOut {
		r := Report{Schedules: s.Schedules, Failed: s.Failed, Ops: s.Ops, Grants: s.Grants, Virtual: s.Virtual, Wall: s.Wall, CPU: s.CPU}
		if len(o.failures) > 0 {
			// The first to come in, not the lowest seed.
			f := o.first
			r.FirstSeed, r.FirstAfter, r.FirstSummary, r.FirstSignature, r.FirstDetails = f.Seed, o.firstAt, f.Summary, f.Sig, f.Details
		}
		fmt.Fprintf(w, "%s", marker)
		json.NewEncoder(w).Encode(r)
		return
	}
	fmt.Fprintf(w, "sim: %d schedules in %v on %d workers: %d failed\n", s.Schedules, s.Wall.Round(time.Millisecond), c.workers, s.Failed)
	fmt.Fprintf(w, "  %d operations, %d locks granted, %v simulated\n", s.Ops, s.Grants, s.Virtual.Round(time.Second))
	if s.CPU > 0 && s.Wall > 0 {
		fmt.Fprintf(w, "  speed: %.0f schedules/s, %.0f grants per CPU-second (%v of CPU), %.0fx simulated time per CPU time\n",
			float64(s.Schedules)/s.Wall.Seconds(), float64(s.Grants)/s.CPU.Seconds(), s.CPU.Round(time.Millisecond), s.Virtual.Seconds()/s.CPU.Seconds())
	}
	for _, f := range o.failures {
		fmt.Fprintf(w, "  FAIL %s\n", f.Summary)
	}
}

// replayCommand is the command that replays seed with c's options.
func replayCommand(c config, seed uint64) string {
	args := append([]string{"go run ./sim/cmd/sim --seed", strconv.FormatUint(seed, 10)}, c.scheduleArgs()...)
	return strings.Join(args, " ")
}

// tailWriter keeps the last 16 KiB written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > 16<<10 {
		w.buf = w.buf[len(w.buf)-16<<10:]
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "panic:") || strings.HasPrefix(lines[i], "fatal error:") {
			return lines[i]
		}
	}
	return lines[len(lines)-1]
}
