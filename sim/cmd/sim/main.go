// Command sim runs the deterministic simulator: seeded schedules of the
// real redlock package against simulated masters and network, each judged
// by the chaos suite's checkers; a failure prints its seed, a command that
// replays it, how often it reproduces, and a shrunk schedule.
//
//	sim                              # explore for --duration (2m) on every core
//	sim --schedules 100000           # a number of schedules instead
//	sim --soak 8h                    # a long run: every distinct failure replayed and shrunk
//	sim --seed 42                    # replay one seed (--repeat 20: how often it fails; --trace: every command)
//	sim --replay shrunk.json         # replay a schedule written by a failing run
//	sim --defect list                # the mutation self-test's defects in redlock, quorum and the scripts
//	sim --defect all                 # each defect applied to a copy of the tree, explored until caught (--duration each)
//	sim --defect quorum-half         # some of them
//
// Exit status: 0 when nothing failed (or every defect was caught), 1
// otherwise, 2 for bad usage.
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/sim/schedule"
)

type config struct {
	seed       uint64
	seedSet    bool
	from       uint64
	schedules  int
	duration   time.Duration
	workers    int
	worker     string // "i/n": this process is worker i of n
	repeat     int
	trace      bool
	replay     string
	shrink     bool
	defect     string
	root       string
	kinds      string
	faults     string
	unsafe     bool
	masters    int
	out        string
	stop       bool
	quiet      bool
	jsonOut    bool
	skipBase   bool
	defectTime time.Duration
	theme      string
	noWarmup   bool
	persist    string
	tight      bool
	fencedRes  bool
	strict     bool
	soak       time.Duration
}

func main() {
	var c config
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.Uint64Var(&c.seed, "seed", 0, "run this seed only (replay)")
	fs.Uint64Var(&c.from, "from", 0, "first seed of an exploration (default: drawn from the clock, printed)")
	fs.IntVar(&c.schedules, "schedules", 0, "number of schedules to explore (default: as many as --duration allows)")
	fs.DurationVar(&c.duration, "duration", 2*time.Minute, "how long to explore (with --defect: per defect)")
	fs.DurationVar(&c.soak, "soak", 0, "a long run: explore for this long (e.g. 8h) instead of --duration, and replay, measure and shrink every distinct failure (up to 5), not only the first")
	fs.IntVar(&c.workers, "workers", runtime.NumCPU(), "processes exploring at once, each on one core")
	fs.StringVar(&c.worker, "worker", "", "internal: run as worker i/n")
	fs.IntVar(&c.repeat, "repeat", 1, "with --seed or --replay: run it this many times and say how often it failed")
	fs.BoolVar(&c.trace, "trace", false, "with --seed or --replay: print every command the masters run, every fault and the history")
	fs.StringVar(&c.replay, "replay", "", "run the schedule in this JSON file (written by a failing run)")
	fs.BoolVar(&c.shrink, "shrink", true, "shrink a failing schedule and write it to --out")
	fs.StringVar(&c.defect, "defect", "", "mutation self-test: 'list', 'all', or comma-separated defect names")
	fs.StringVar(&c.root, "root", "", "with --defect: the repository's root (default: found from the working directory)")
	fs.StringVar(&c.kinds, "kinds", "", "comma-separated operations to draw, of "+kindNames())
	fs.StringVar(&c.faults, "faults", "", "comma-separated faults to draw, of "+faultNames())
	fs.BoolVar(&c.unsafe, "unsafe", false, "allow faults outside the library's assumptions (a violation is then expected)")
	fs.IntVar(&c.masters, "masters", 0, "number of masters (default: 3 or 5, drawn)")
	fs.StringVar(&c.out, "out", "sim-report", "directory for shrunk schedules")
	fs.BoolVar(&c.stop, "stop", false, "stop exploring at the first failure")
	fs.BoolVar(&c.quiet, "quiet", false, "no progress on stderr")
	fs.BoolVar(&c.jsonOut, "json", false, "write the summary as JSON")
	fs.BoolVar(&c.skipBase, "skip-baseline", false, "with --defect: skip the run without a defect")
	fs.StringVar(&c.theme, "theme", "", "plain (faults anywhere) or split (each client reaches a quorum of its own; the shared masters fail); default: drawn")
	fs.StringVar(&c.persist, "persist", "", "every master's persistence: none, everysec or always (default: drawn per master)")
	fs.BoolVar(&c.noWarmup, "no-warmup", false, "split theme: no warm-up lock records the longest TTL first (the guard's gap, see the README)")
	fs.BoolVar(&c.strict, "strict-leftovers", true, "the final leftover check excuses no master to which a release failed (the release retries' window, see the README); =false excuses them")
	fs.BoolVar(&c.fencedRes, "fenced-resume", true, "hand-overs may be of fenced locks (the resumed token, see the README); =false keeps to plain ones")
	fs.BoolVar(&c.tight, "tight-renewals", false, "renewed locks may have TTLs close to a round's time (the renewal's timing, see the README)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "seed" {
			c.seedSet = true
		}
	})
	if c.soak > 0 {
		c.duration = c.soak
	}
	c.defectTime = c.duration
	switch {
	case c.worker != "":
		host(func(t testingT) { runWorker(t, c) })
	case c.defect != "":
		os.Exit(runDefects(c))
	case c.seedSet || c.replay != "":
		host(func(t testingT) { runReplay(t, c) })
	default:
		os.Exit(runExplore(c))
	}
}

// options are the schedule options the flags ask for.
func (c config) options() (schedule.Options, error) {
	o := schedule.Options{Unsafe: c.unsafe, Masters: c.masters, Theme: c.theme, NoWarmup: c.noWarmup, TightRenewals: c.tight, FencedResume: c.fencedRes, Persist: c.persist}
	if c.theme != "" && c.theme != "plain" && c.theme != "split" {
		return o, fmt.Errorf("unknown theme %q (plain or split)", c.theme)
	}
	if c.persist != "" && c.persist != "none" && c.persist != "everysec" && c.persist != "always" {
		return o, fmt.Errorf("unknown persistence %q (none, everysec or always)", c.persist)
	}
	for _, k := range split(c.kinds) {
		if !valid(k, kindNames()) {
			return o, fmt.Errorf("unknown kind %q (want some of %s)", k, kindNames())
		}
		o.Kinds = append(o.Kinds, schedule.Kind(k))
	}
	for _, f := range split(c.faults) {
		if !valid(f, faultNames()) {
			return o, fmt.Errorf("unknown fault %q (want some of %s)", f, faultNames())
		}
		o.Faults = append(o.Faults, schedule.FaultKind(f))
	}
	return o, nil
}

func split(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func valid(x, list string) bool {
	for _, y := range strings.Split(list, ",") {
		if x == y {
			return true
		}
	}
	return false
}

func kindNames() string {
	var s []string
	for _, k := range schedule.Kinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ",")
}

func faultNames() string {
	var s []string
	for _, k := range schedule.FaultKinds {
		s = append(s, string(k))
	}
	return strings.Join(s, ",")
}

func fatal(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "sim: "+format+"\n", args...)
	os.Exit(2)
}
