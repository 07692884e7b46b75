package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/mutation"
	"github.com/quorumlock/quorumlock/sim/mutate"
)

// runDefects is the mutation self-test against the simulator (--defect);
// its exit status.
func runDefects(c config) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	root := c.root
	if root == "" {
		wd, err := os.Getwd()
		if err != nil {
			fatal("%v", err)
		}
		if root, err = mutation.RepoRoot(ctx, wd); err != nil {
			fatal("%v", err)
		}
	}
	all := mutate.Defects(root)
	if c.defect == "list" {
		for _, d := range all {
			origin := "chaos/mutation"
			if !inChaos(d.Name) {
				origin = "sim (extra)"
			}
			state := "ok"
			if err := d.Check(root); err != nil {
				state = "STALE anchor"
			}
			fmt.Printf("%-40s %-15s %-12s %s\n", d.Name, origin, state, d.Description)
		}
		var out []string
		for _, d := range mutation.Defects() {
			if !mutate.InScope(d) {
				out = append(out, d.Name)
			}
		}
		fmt.Printf("\nout of the simulator's reach (transport, command): %s\n", strings.Join(out, ", "))
		return 0
	}
	var defects []mutation.Defect
	if c.defect == "all" {
		defects = all
	} else {
		for _, name := range split(c.defect) {
			i := slices.IndexFunc(all, func(d mutation.Defect) bool { return d.Name == name })
			if i < 0 {
				fatal("unknown defect %q (--defect list)", name)
			}
			defects = append(defects, all[i])
		}
	}
	args := []string{"--from", "1"}
	if c.from != 0 {
		args = []string{"--from", fmt.Sprint(c.from)}
	}
	args = append(args, c.childArgs()[2:]...) // all but --duration: the budget is the runner's
	fmt.Printf("sim: mutation self-test, %d defects, each explored for up to %v on %d workers\n", len(defects), c.defectTime, c.workers)
	rep, err := mutate.Run(ctx, mutate.Config{Root: root, Defects: defects, Budget: c.defectTime, Workers: c.workers, Args: args, SkipBaseline: c.skipBase, Progress: os.Stdout})
	if err != nil {
		fatal("%v", err)
	}
	// A caught defect's seed tells how many schedules it took: the
	// workers explore the seeds from --from on together.
	fmt.Printf("\n%-40s %-8s %10s %10s  %s\n", "DEFECT", "OUTCOME", "AFTER", "SEED", "HOW")
	if !c.skipBase {
		b := rep.Baseline
		fmt.Printf("%-40s %-8s %10v %10s  %d schedules %s\n", "(baseline)", passOrFail(b), b.After.Round(time.Second), "-", b.Schedules, b.Failure+b.Detail)
	}
	for _, r := range rep.Results {
		how, seed := strings.Join(r.Signature, ", "), "-"
		if r.Outcome == mutate.Caught {
			seed = fmt.Sprint(r.Seed)
		} else if r.Outcome == mutate.Missed {
			how = fmt.Sprintf("%d schedules, none failed", r.Schedules)
		} else if r.Detail != "" {
			how = r.Detail
		}
		fmt.Printf("%-40s %-8s %10v %10s  %s\n", r.Defect.Name, r.Outcome, r.After.Round(100*time.Millisecond), seed, firstLine(how))
	}
	fmt.Printf("\n%d of %d caught in %v\n", rep.Caught(), len(rep.Results), rep.Elapsed.Round(time.Second))
	if rep.OK() {
		return 0
	}
	return 1
}

func passOrFail(r mutate.Result) string {
	if r.Outcome == mutate.Missed {
		return "pass"
	}
	return string(r.Outcome)
}

func inChaos(name string) bool {
	for _, d := range mutation.Defects() {
		if d.Name == name {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
