// Command mutate is the chaos suite's mutation self-test: it applies
// deliberate defects to a temporary copy of the repository, one at a time,
// runs the short scenarios expected to catch each, and prints the score.
// The exit status is 0 only when the unmutated baseline passes and every
// defect is caught; 2 when the run could not be set up (a stale anchor).
//
//	go run ./cmd/mutate                      # every defect, each with its scenarios
//	go run ./cmd/mutate --all-scenarios      # every defect against the whole short suite
//	go run ./cmd/mutate --defect quorum-half # some defects only (--list names them)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/chaos/mutation"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mutate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "", "repository root to copy (default: the git root of the working directory)")
	all := fs.Bool("all-scenarios", false, "run the whole short suite for every defect, not only its scenarios")
	only := fs.String("defect", "", "comma-separated defects to apply (default: all)")
	list := fs.Bool("list", false, "list the defects and exit")
	check := fs.Bool("check", false, "only check that every anchor occurs exactly once in the tree, and exit")
	keep := fs.Bool("keep", false, "keep the temporary copy and its logs")
	timeout := fs.Duration("timeout", 5*time.Minute, "bound on one go test run")
	skipBaseline := fs.Bool("skip-baseline", false, "skip the run without a defect, when the same scenarios just passed on this tree (CI: the chaos module's tests)")
	parallel := fs.Int("parallel", 1, "defects run at once, each in a copy of the tree of its own (the baseline runs alone)")
	rate := fs.Int("rate", 0, "measure catch rates: run each defect's scenarios this many times, all of them, and report in how many one failed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	defects := mutation.Defects()
	if *only != "" {
		names := strings.Split(*only, ",")
		defects = slices.DeleteFunc(defects, func(d mutation.Defect) bool { return !slices.Contains(names, d.Name) })
		if len(defects) != len(names) {
			fmt.Fprintf(stderr, "mutate: unknown defect in %q (--list names them)\n", *only)
			return 2
		}
	}
	if *list {
		for _, d := range defects {
			fmt.Fprintf(stdout, "%-32s %s\n%-32s scenarios: %s\n", d.Name, d.Description, "", strings.Join(d.Scenarios, ","))
			if d.Note != "" {
				fmt.Fprintf(stdout, "%-32s how: %s\n", "", d.Note)
			}
		}
		return 0
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *root == "" {
		r, err := mutation.RepoRoot(ctx, ".")
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		*root = r
	}
	if *check {
		var failed bool
		for _, d := range defects {
			if err := d.Check(*root); err != nil {
				fmt.Fprintln(stderr, err)
				failed = true
			}
		}
		if failed {
			return 2
		}
		fmt.Fprintf(stdout, "mutate: %d defects, every anchor found exactly once in %s\n", len(defects), *root)
		return 0
	}
	rep, err := mutation.Run(ctx, mutation.Config{
		Root: *root, Defects: defects, AllScenarios: *all, Timeout: *timeout, Keep: *keep, Progress: stderr, Rate: *rate, Parallel: *parallel, SkipBaseline: *skipBaseline,
	})
	if rep != nil && (rep.Baseline.Outcome != "" || len(rep.Results) > 0) {
		rep.Print(stdout)
		if *keep {
			fmt.Fprintf(stdout, "copy and logs kept in %s\n", rep.Dir)
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "mutate:", err)
		return 2
	}
	if !rep.OK() {
		return 1
	}
	return 0
}
