package sim

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/sim/master"
	"github.com/quorumlock/quorumlock/sim/schedule"
	"github.com/quorumlock/quorumlock/sim/workload"
	"github.com/quorumlock/quorumlock/sim/world"
)

// Result is the outcome of one schedule.
type Result struct {
	Seed uint64
	// Checked is the chaos checker's verdict on the history.
	Checked checker.Result
	// Violations are every violation: the checker's (Checked.Violations),
	// fair order and starvation on fair locks, and the simulator's own
	// (validity at grant, Resume of a released lock), by time.
	Violations []checker.Violation
	// Second is the second checker's (porcupine's) verdict; Agree whether
	// it found exactly the keys with overlaps illegal.
	Second string
	Agree  bool
	// Hung: the run did not end within its bound (a call that never
	// returned), or goroutines of the library stayed blocked after it
	// (Blocked says how); Err: the run could not be set up.
	Hung    bool
	Blocked string
	Err     error
	// Counts.
	Ops, Grants, Faults         int
	Events, Sent, Dropped, Late int
	Virtual                     time.Duration // simulated time the run took
}

// Failed reports whether the run found anything wrong.
func (r *Result) Failed() bool {
	return r.Err != nil || r.Hung || len(r.Checked.Overlaps) > 0 || len(r.Violations) > 0 || !r.Agree
}

// Summary is a one-line account of the result.
func (r *Result) Summary() string {
	if r.Err != nil {
		return fmt.Sprintf("seed %d: error: %v", r.Seed, r.Err)
	}
	s := fmt.Sprintf("seed %d: %d ops, %d grants, %d faults, %v simulated; %d overlaps, %d violations, porcupine %s",
		r.Seed, r.Ops, r.Grants, r.Faults, r.Virtual.Round(time.Millisecond), len(r.Checked.Overlaps), len(r.Violations), r.Second)
	if r.Hung {
		s += "; HUNG"
	}
	if !r.Agree {
		s += "; CHECKERS DISAGREE"
	}
	return s
}

// Details lists the overlaps and violations, one a line.
func (r *Result) Details() string {
	var b []byte
	for _, o := range r.Checked.Overlaps {
		b = fmt.Appendf(b, "  overlap on %s: %v and %v\n", o.Key, o.A, o.B)
	}
	for _, v := range r.Violations {
		b = fmt.Appendf(b, "  %s\n", v)
	}
	if r.Hung {
		b = fmt.Appendf(b, "  the run did not end: a call hung %s\n", r.Blocked)
	}
	return string(b)
}

// Options are a run's options.
type Options struct {
	// Trace, if set, receives a line for every command a master runs and
	// every fault, and the history at the end.
	Trace io.Writer
	// Exec, if set, is told of every command a master runs (with the
	// World's lock held: it must not call the World).
	Exec func(world.Exec)
	// Rewrite, if set, rewrites every script before a master runs it (a
	// defect put into a script in-process, for tests).
	Rewrite func(src string) string
	// StrictLeftovers: the final leftover check does not excuse a master
	// to which a release failed.
	StrictLeftovers bool
}

// Run runs s in a synctest bubble of t and returns its result.
func Run(t *testing.T, s *schedule.Schedule, o ...Options) *Result {
	var opts Options
	if len(o) > 0 {
		opts = o[0]
	}
	var res *Result
	func() {
		defer func() {
			// A bubble whose goroutines stay blocked for ever (a call
			// that never returns, a context that never ends) panics when
			// its root returns or blocks too: the run hung.
			if p := recover(); p != nil {
				if res == nil {
					res = &Result{Seed: s.Seed, Faults: len(s.Faults), Agree: true}
				}
				res.Hung, res.Blocked = true, fmt.Sprint(p)
			}
		}()
		synctest.Test(t, func(t *testing.T) { res = runBubble(s, opts) })
	}()
	return res
}

// maxRun bounds a run's simulated time beyond its horizon: a run still
// going then has a call that hangs.
const maxRun = 2 * time.Minute

// runBubble runs s; it must run inside a bubble.
func runBubble(s *schedule.Schedule, opts Options) *Result {
	res := &Result{Seed: s.Seed, Faults: len(s.Faults)}
	start := time.Now()
	wc := worldConfig(s)
	wc.Rewrite = opts.Rewrite
	w := world.New(wc, start)
	h := checker.NewHistory(start)
	r, err := workload.New(w, s, h)
	if err != nil {
		res.Err = err
		return res
	}
	r.StrictLeftovers = opts.StrictLeftovers
	if opts.Trace != nil {
		traceExec(w, opts.Trace, start)
	}
	if opts.Exec != nil {
		next := w.OnExec
		w.OnExec = func(e world.Exec) {
			opts.Exec(e)
			next(e)
		}
	}
	w.Run()
	for _, f := range s.Faults {
		w.At(start.Add(f.At.D()), func() {
			if opts.Trace != nil {
				fmt.Fprintf(opts.Trace, "%12v FAULT %s\n", time.Since(start), f)
			}
			inject(w, r, f)
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.Horizon.D()+maxRun)
	defer cancel()
	r.Start(ctx)
	res.Hung = ctx.Err() != nil
	if !res.Hung {
		w.Heal()
		awaitQuiet(w, s)
		r.FinalCheck()
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	r.Close(cctx)
	ccancel()
	w.Stop()
	synctest.Wait() // the watchers note what they saw at the end
	res.Virtual = time.Since(start)
	res.Ops, res.Grants = r.Counts()
	res.Events, res.Sent, res.Dropped, res.Late = w.Stats()
	judge(res, s, r, h)
	if opts.Trace != nil {
		for _, e := range h.Events() {
			fmt.Fprintf(opts.Trace, "%12v EVENT %+v\n", e.At, e)
		}
	}
	return res
}

// awaitQuiet waits until every master is up, nothing is in flight, and
// 2.5s passed since the last fault ended (release retries).
func awaitQuiet(w *world.World, s *schedule.Schedule) {
	for {
		up := true
		for i := range s.Masters {
			if ok, _ := w.Up(i); !ok {
				up = false
			}
		}
		var last time.Time
		quiet := true
		idle := true
		for c := range s.Clients {
			since, ok := w.QuietSince(c)
			quiet = quiet && ok
			if since.After(last) {
				last = since
			}
			idle = idle && w.Idle(c)
		}
		if up && quiet && idle && time.Since(last) >= 2500*time.Millisecond {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// worldConfig is the World a schedule runs in.
func worldConfig(s *schedule.Schedule) world.Config {
	cfg := world.Config{
		Clients: s.Clients,
		Delay:   world.Range{Min: s.Net.DelayMin.D(), Max: s.Net.DelayMax.D()},
		FIFO:    s.Net.FIFO,
		Stall:   s.Net.Stall.D(),
		Seed:    s.Seed,
	}
	for _, m := range s.Masters {
		p := persistence(m.Persist)
		rate := m.ClockRate
		if rate == 0 {
			rate = 1
		}
		cfg.Masters = append(cfg.Masters, world.MasterConfig{Persist: p, ClockOffset: m.ClockOffset.D(), ClockRate: rate, ReplicaLag: m.ReplicaLag.D(), FsyncPhase: m.FsyncPhase.D(), NoInfo: m.NoInfo})
	}
	return cfg
}

// persistence is a schedule's persistence as a master runs it.
func persistence(name string) master.Persistence {
	switch name {
	case "everysec", "always", "no":
		return master.Persistence{AppendOnly: true, Fsync: name}
	}
	return master.Persistence{Fsync: "everysec"} // no AOF (appendfsync keeps its default)
}

// inject puts fault f in force now.
func inject(w *world.World, r *workload.Run, f schedule.Fault) {
	req, rep := f.Dir != "rep", f.Dir != "req"
	switch f.Kind {
	case schedule.Delay:
		w.Link(world.LinkFault{Clients: f.Clients, Masters: f.Masters, For: f.For.D(), ToMaster: req, ToClient: rep, Delay: f.Delay.D()})
	case schedule.Drop:
		w.Link(world.LinkFault{Clients: f.Clients, Masters: f.Masters, For: f.For.D(), ToMaster: req, ToClient: rep, Drop: f.Prob})
	case schedule.LoseReply:
		w.Link(world.LinkFault{Clients: f.Clients, Masters: f.Masters, For: f.For.D(), ToClient: true, Drop: f.Prob, Reset: f.Reset})
	case schedule.Cut:
		w.Link(world.LinkFault{Clients: f.Clients, Masters: f.Masters, For: f.For.D(), ToMaster: true, ToClient: true, Cut: true, Drop: f.Prob})
	case schedule.Crash:
		for _, i := range f.Masters {
			if p := w.Master(i).Persist; !p.AppendOnly || p.Fsync != "always" {
				r.NoteLoss(i, time.Now())
			}
			var then *master.Persistence
			if f.Persist != "" {
				p := persistence(f.Persist)
				then = &p
			}
			w.Crash(i, f.For.D(), then)
		}
	case schedule.Restart:
		for _, i := range f.Masters {
			w.Restart(i, f.For.D())
		}
	case schedule.Freeze:
		for _, i := range f.Masters {
			w.Freeze(i, f.For.D())
		}
	case schedule.ClockStep:
		for _, i := range f.Masters {
			w.ClockStep(i, f.Step.D())
		}
	case schedule.ClockRate:
		for _, i := range f.Masters {
			w.ClockRate(i, f.Rate)
		}
	case schedule.Failover:
		for _, i := range f.Masters {
			if w.Failover(i) {
				r.NoteLoss(i, time.Now())
			}
		}
	case schedule.Lag:
		for _, i := range f.Masters {
			w.SetLag(i, f.Lag.D())
		}
	case schedule.ClientPause:
		for _, c := range f.Clients {
			w.FreezeClient(c, f.For.D())
		}
	}
}

// traceExec writes a line for every command the masters run.
func traceExec(w *world.World, out io.Writer, start time.Time) {
	next := w.OnExec
	w.OnExec = func(e world.Exec) {
		name := "cmd"
		if e.Src != "" {
			name, _, _ = strings.Cut(strings.TrimPrefix(e.Src, "-- "), "\n")
			if len(name) > 40 {
				name = name[:40]
			}
		}
		late := ""
		if e.Late {
			late = " LATE"
		}
		fmt.Fprintf(out, "%12v EXEC c%d m%d %q keys=%v args=%v -> %v%s\n", e.At.Sub(start), e.Client, e.Master, name, e.Keys, e.Args, e.Reply, late)
		if next != nil {
			next(e)
		}
	}
}
