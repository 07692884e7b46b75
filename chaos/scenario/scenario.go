package scenario

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/linearize"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// Nodes is the number of masters of every scenario.
const Nodes = 5

// Scenario is one experiment: a cluster, clients, faults, and the outcome
// expected of them.
type Scenario struct {
	// Name is the scenario's handle on the command line, e.g. "clock-jump".
	Name string
	// Kind names the kinds of lock the scenario exercises ("fenced",
	// "reentrant", ..., "all").
	Kind string
	// Invariant is the property the scenario checks.
	Invariant string
	// Expect is the outcome expected, in words.
	Expect string
	// Unsafe marks the scenarios that reproduce a known violation of mutual
	// exclusion: for them an overlap is the expected outcome.
	Unsafe bool
	// Persistence is what the nodes must keep across a restart.
	Persistence cluster.Persistence
	// Driven, when set, is the entry point and process lifetime the
	// scenario drives (the restart matrix), for the report.
	Driven *Driven

	run func(ctx context.Context, r *Run) error
}

// Driven is what a scenario drove: through which entry point (a Node type,
// or the command) and in which process lifetime.
type Driven struct {
	Transport workload.Transport `json:"transport"`
	Lifetime  string             `json:"lifetime"`
}

// Options configure a scenario run.
type Options struct {
	// Backend names the cluster backend (cluster.BackendLocal, ...).
	Backend string
	// Open starts a cluster; nil means cluster.Start(ctx, Backend, cfg).
	Open func(ctx context.Context, cfg cluster.Config) (cluster.Cluster, error)
	// Seed drives every random choice of the run (the fault schedule, the
	// clients' choices); 0 draws one, which the Result reports.
	Seed uint64
	// Duration is the length of the random workloads: safe-minority runs
	// that long, split-vote and paused-holder a third of it, majority-down
	// a tenth (at least a second). 0 means Short.
	Duration time.Duration
	// Clients is the number of clients of the random workloads; 0 means 4.
	Clients int
	// Progress, if set, is called about every ProgressEvery (0: 250ms)
	// while the scenario runs.
	Progress      func(Progress)
	ProgressEvery time.Duration
	// Watchdog is the longest a scenario may run: one still running then
	// fails as hung, with a dump of every goroutine in its Result, and the
	// suite goes on. 0 means DefaultWatchdog(Duration).
	Watchdog time.Duration
	// Server is the server binary of the local backend's masters
	// (cluster.Config.Server): "" means $QUORUMLOCK_SERVER, else
	// redis-server; valkey-server runs the scenario against Valkey.
	Server string
	// Transport is how the clients of the safe scenarios reach the masters:
	// "" draws a mix from the seed (every transport of workload.Transports
	// once when there are at least as many clients), one of
	// workload.Transports gives every client that one. The scripted
	// scenarios always use the pipelined *pool.Node.
	Transport workload.Transport
}

// Short is the Duration of a short run, as the tests use.
const Short = 3 * time.Second

// Progress is a snapshot of a running scenario.
type Progress struct {
	Scenario string
	Elapsed  time.Duration
	workload.Counts
}

// Verdict says whether a scenario behaved as expected.
type Verdict string

// Verdicts.
const (
	Pass  Verdict = "PASS"  // every check held: the expected outcome
	Fail  Verdict = "FAIL"  // a check failed
	Skip  Verdict = "SKIP"  // the backend cannot run it (e.g. persistence)
	Error Verdict = "ERROR" // the harness failed (a node did not start, ...)
)

// Check is one assertion of a scenario.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
}

// Result is what a scenario run found.
type Result struct {
	Scenario  string `json:"scenario"`
	Kind      string `json:"kind"`
	Invariant string `json:"invariant"`
	Expect    string `json:"expect"`
	Unsafe    bool   `json:"unsafe"`
	Backend   string `json:"backend"`
	// Server is the server binary of the local backend ("" on the
	// others, which run their image's).
	Server string `json:"server,omitempty"`
	Seed   uint64 `json:"seed"`
	// Elapsed is the wall time of the run, cluster start included.
	Elapsed time.Duration `json:"elapsed_ns"`
	Verdict Verdict       `json:"verdict"`
	// Reason explains a Skip or an Error.
	Reason string  `json:"reason,omitempty"`
	Checks []Check `json:"checks"`
	// Outcome sums up what happened, e.g. "2 overlaps detected".
	Outcome string `json:"outcome"`

	Attempts      int `json:"attempts"`
	Acquisitions  int `json:"acquisitions"`
	Faults        int `json:"faults"`
	Overlaps      int `json:"overlaps"`
	Writes        int `json:"writes"`
	StaleRejected int `json:"stale_writes_rejected"`
	LateWrites    int `json:"late_writes"`
	// Violations counts, per invariant, the overlaps (mutual-exclusion)
	// and the other violations the checker found; Violation details the
	// first ones.
	Violations map[checker.Invariant]int `json:"violations"`
	Violation  []checker.Violation       `json:"violation_detail,omitempty"`
	// Checker is the verdict of the interval checker, Linearize the one of
	// the second checker (porcupine); Agree whether they agree.
	Checker   string `json:"checker"`
	Linearize string `json:"linearize"`
	Agree     bool   `json:"agree"`

	// The timeline, for the SVG: node names, the number of clients, the
	// faults applied, every lock interval and every overlap.
	Nodes     []string           `json:"nodes"`
	Clients   int                `json:"clients"`
	FaultLog  []fault.Applied    `json:"fault_log"`
	Intervals []checker.Interval `json:"-"`
	Overlap   []checker.Overlap  `json:"overlap_detail,omitempty"`
	// End is the offset of the end of the run on its timeline.
	End time.Duration `json:"end_ns"`
	// Log holds notes the scenario made along the way.
	Log []string `json:"log,omitempty"`

	// Expected is the outcome the verdict asks for, in two words:
	// ExpectSafe or ExpectOverlap.
	Expected string `json:"expected"`
	// Aborted says why the scenario's body did not end by itself: it hung
	// past the watchdog, or it panicked ("" when it ended). Such a
	// scenario fails.
	Aborted string `json:"aborted,omitempty"`
	// Dump is, for a hung scenario, the stacks of every goroutine of the
	// process when the watchdog fired; for one that panicked, the stack of
	// the goroutine that panicked.
	Dump string `json:"goroutine_dump,omitempty"`
	// Transports says, per transport the clients used, which clients used
	// it and how many locks they acquired.
	Transports []TransportUse `json:"transports,omitempty"`
	// Driven is the entry point and process lifetime the scenario drove
	// (the restart matrix), nil for the others.
	Driven *Driven `json:"driven,omitempty"`
}

// What Result.Expected says.
const (
	// ExpectSafe: a safe scenario passes only with 0 overlaps and 0
	// violations of any invariant.
	ExpectSafe = "0 overlaps"
	// ExpectOverlap: an unsafe scenario passes only when the overlap it
	// reproduces is detected.
	ExpectOverlap = "overlap detected"
)

// TransportUse is what the clients of one transport did in a run.
type TransportUse struct {
	Transport workload.Transport `json:"transport"`
	Clients   []int              `json:"clients"`
	Acquired  int                `json:"acquired"`
}

// maxOverlapDetail bounds the overlaps kept in a Result.
const maxOverlapDetail = 100

// Run is the state of one scenario run, handed to its body.
type Run struct {
	sc   *Scenario
	opts Options
	res  *Result
	// Seed is the run's seed.
	Seed uint64

	// mu guards what the body and the runner share: the body may still
	// run (hung, abandoned by the watchdog) while the runner finishes.
	mu      sync.Mutex
	env     *workload.Env
	cluster cluster.Cluster
	// closed is set when the runner finishes: from then on the body's
	// checks and notes are dropped, and it can start no cluster.
	closed bool
	// extra are the violations of invariants that checker.Check does not
	// verify (the election's, checker.CheckElection), for the report.
	extra     []checker.Violation
	extraInvs []checker.Invariant
}

// Run runs the scenario and returns what it found. It never panics on a
// failing cluster: harness failures give Verdict Error.
func (s Scenario) Run(ctx context.Context, opts Options) Result {
	if opts.Duration <= 0 {
		opts.Duration = Short
	}
	if opts.Clients <= 0 {
		opts.Clients = 4
	}
	if opts.Backend == "" {
		opts.Backend = cluster.BackendLocal
	}
	if opts.Seed == 0 {
		var b [8]byte
		rand.Read(b[:])
		opts.Seed = binary.LittleEndian.Uint64(b[:]) >> 1 // positive as an int64, too
	}
	res := &Result{Scenario: s.Name, Kind: cmp.Or(s.Kind, "fenced"), Invariant: s.Invariant, Expect: s.Expect, Unsafe: s.Unsafe, Driven: s.Driven,
		Backend: opts.Backend, Seed: opts.Seed, Expected: ExpectSafe}
	if opts.Backend == cluster.BackendLocal {
		res.Server = cluster.Config{Server: opts.Server}.ServerBinary()
	}
	if s.Unsafe {
		res.Expected = ExpectOverlap
	}
	r := &Run{sc: &s, opts: opts, res: res, Seed: opts.Seed}
	start := time.Now()

	stop := r.progress()
	err := r.watch(ctx)
	stop()
	r.finish(err)
	res.Elapsed = time.Since(start)
	return *res
}

// progress calls opts.Progress periodically until the returned function is
// called.
func (r *Run) progress() (stop func()) {
	if r.opts.Progress == nil {
		return func() {}
	}
	every := r.opts.ProgressEvery
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	start := time.Now()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			p := Progress{Scenario: r.sc.Name, Elapsed: time.Since(start)}
			r.mu.Lock()
			e := r.env
			r.mu.Unlock()
			if e != nil {
				p.Counts = e.Counts()
			}
			r.opts.Progress(p)
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// finish heals what the faults left, records the history and the verdict,
// and removes the cluster. A body that hung or panicked fails the
// scenario (err then carries the hang or the panic).
func (r *Run) finish(err error) {
	r.mu.Lock()
	r.closed = true
	e, cl := r.env, r.cluster
	r.mu.Unlock()
	res := r.res
	err = r.aborted(err)
	if e != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		if herr := e.Faults.HealAll(ctx); herr != nil && err == nil {
			err = herr
		}
		cancel()
		events := e.History.Events()
		c := checker.Check(events)
		n := e.Counts()
		res.Violations = c.ByInvariant()
		res.Violation = c.Violations[:min(len(c.Violations), maxOverlapDetail)]
		for _, inv := range r.extraInvs {
			res.Violations[inv] += 0 // an entry, as Check's invariants have
		}
		for _, v := range r.extra {
			res.Violations[v.Invariant]++
			if len(res.Violation) < maxOverlapDetail {
				res.Violation = append(res.Violation, v)
			}
		}
		res.Checker = "safe"
		if !c.Holds() {
			res.Checker = fmt.Sprintf("%d overlaps, %d other violations", len(c.Overlaps), len(c.Violations))
		}
		if err == nil {
			verdict, agree, lerr := linearize.SecondOpinion(events, c, linearize.Options{})
			if lerr != nil {
				err = lerr
			}
			res.Linearize, res.Agree = verdict, agree
			r.addCheck("checkers agree", agree, "interval checker: %d overlaps on keys %v; porcupine: %s", len(c.Overlaps), overlapKeys(c), verdict)
		}
		res.Attempts, res.Acquisitions, res.Faults = n.Attempts, n.Acquired, n.Faults
		res.Writes, res.StaleRejected, res.LateWrites = n.Writes, n.Rejected, n.Late
		res.Overlaps = len(c.Overlaps)
		res.Intervals = c.Intervals
		res.Overlap = c.Overlaps[:min(len(c.Overlaps), maxOverlapDetail)]
		res.FaultLog = e.Faults.Log()
		res.Clients = len(e.Clients())
		res.Transports = transportUse(e, c)
		r.addLog("%s", clientsNote(e))
		if kinds := faultKinds(res.FaultLog); kinds != "" {
			r.addLog("faults injected: %s", kinds)
		}
		res.End = e.Now()
		for _, n := range e.Cluster.Nodes() {
			res.Nodes = append(res.Nodes, n.Name())
		}
		if !r.sc.Unsafe {
			r.noViolation(c)
		}
		r.bounded("closing the clients and proxies", e.Close)
	}
	if cl != nil {
		if cerr := r.bounded("removing the cluster", cl.Close); cerr != nil && err == nil {
			err = cerr
		}
	}
	switch {
	case errors.Is(err, cluster.ErrUnsupported):
		res.Verdict, res.Reason = Skip, err.Error()
	case err != nil:
		res.Verdict, res.Reason = Error, err.Error()
	default:
		res.Verdict = Pass
		for _, c := range res.Checks {
			if !c.OK {
				res.Verdict = Fail
			}
		}
	}
	res.Outcome = outcome(res)
}

// faultKinds counts the faults of log that were injected, per kind, e.g.
// "3 kill, 1 delay-requests", in the order of their first injection.
func faultKinds(log []fault.Applied) string {
	var kinds []fault.Kind
	n := map[fault.Kind]int{}
	for _, a := range log {
		if !a.Kind.Injects() || a.Err != "" {
			continue
		}
		if n[a.Kind] == 0 {
			kinds = append(kinds, a.Kind)
		}
		n[a.Kind]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", n[k], k)
	}
	return strings.Join(parts, ", ")
}

// overlapKeys lists the keys with overlaps, once each.
func overlapKeys(c checker.Result) []string {
	var keys []string
	for _, o := range c.Overlaps {
		if !slices.Contains(keys, o.Key) {
			keys = append(keys, o.Key)
		}
	}
	return keys
}

func outcome(res *Result) string {
	switch {
	case res.Aborted != "":
		return res.Aborted
	case res.Verdict == Skip || res.Verdict == Error:
		return res.Reason
	case res.Overlaps > 0:
		return fmt.Sprintf("%d overlap(s) detected: mutual exclusion violated", res.Overlaps)
	case res.Acquisitions == 0:
		return "no lock granted"
	default:
		return "no overlap: mutual exclusion held"
	}
}

// Env starts the scenario's cluster (Nodes masters with the scenario's
// persistence) and a workload environment over it. The run removes both when
// it ends. Called by a body the watchdog gave up on, it starts nothing and
// returns ErrAbandoned.
func (r *Run) Env(ctx context.Context, cfg workload.EnvConfig) (*workload.Env, error) {
	open := r.opts.Open
	if open == nil {
		open = func(ctx context.Context, cfg cluster.Config) (cluster.Cluster, error) {
			return cluster.Start(ctx, r.opts.Backend, cfg)
		}
	}
	return r.EnvOn(ctx, func(ctx context.Context) (cluster.Cluster, error) {
		return open(ctx, cluster.Config{Nodes: Nodes, Persistence: r.sc.Persistence, Server: r.opts.Server})
	}, cfg)
}

// EnvOn is Env over the cluster that open starts, for a scenario that
// needs another cluster than the backend's (replicated masters, another
// server binary).
func (r *Run) EnvOn(ctx context.Context, open func(ctx context.Context) (cluster.Cluster, error), cfg workload.EnvConfig) (*workload.Env, error) {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return nil, ErrAbandoned
	}
	c, err := open(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	closed = r.closed
	if !closed {
		r.cluster = c
	}
	r.mu.Unlock()
	if closed { // the runner gave up on this body and finished without it
		c.Close()
		return nil, ErrAbandoned
	}
	e, err := workload.NewEnv(c, cfg)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	closed = r.closed
	if !closed {
		r.env = e
	}
	r.mu.Unlock()
	if closed {
		e.Close()
		return nil, ErrAbandoned
	}
	return e, nil
}

// useServer records that the run's masters are bin, which the scenario
// chose instead of the run's server (Result.Server).
func (r *Run) useServer(bin string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.res.Server = bin
}

// ErrAbandoned is the error of Run.Env called by a hung body that woke up
// after the runner gave up on it and finished without it.
var ErrAbandoned = errors.New("scenario: the runner gave up on this run (watchdog)")

// Duration returns the length of a random workload: the run's Duration
// divided by div, at least least.
func (r *Run) Duration(div int, least time.Duration) time.Duration {
	return max(r.opts.Duration/time.Duration(div), least)
}

// Clients is the number of clients of the random workloads.
func (r *Run) Clients() int { return r.opts.Clients }

// Check records an assertion of the scenario. Once the run finished (a
// hung body abandoned by the watchdog), it records nothing.
func (r *Run) Check(name string, ok bool, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.addCheck(name, ok, format, args...)
	}
}

// addCheck records an assertion; r.mu is held, or the body is done.
func (r *Run) addCheck(name string, ok bool, format string, args ...any) {
	r.res.Checks = append(r.res.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
}

// Violations records violations of invariants that checker.Check does
// not verify (every invariant of invs gets an entry, 0 included), for the
// report: Result.Violations counts them beside Check's. The scenario
// checks them itself (Check).
func (r *Run) Violations(invs []checker.Invariant, vs []checker.Violation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.extraInvs = append(r.extraInvs, invs...)
	r.extra = append(r.extra, vs...)
}

// Logf records a note in the result (nothing once the run finished).
func (r *Run) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.addLog(format, args...)
	}
}

// addLog records a note; r.mu is held, or the body is done.
func (r *Run) addLog(format string, args ...any) {
	r.res.Log = append(r.res.Log, fmt.Sprintf(format, args...))
}

// Checked runs the checker on the history so far.
func (r *Run) Checked() checker.Result { return checker.Check(r.env.History.Events()) }

// Apply applies faults now, in order.
func (r *Run) Apply(ctx context.Context, fs ...fault.Fault) error {
	for _, f := range fs {
		if err := r.env.Faults.Apply(ctx, f); err != nil {
			return err
		}
	}
	return nil
}
