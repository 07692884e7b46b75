package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/quorumlock/quorumlock/sim"
	"github.com/quorumlock/quorumlock/sim/schedule"
)

// runReplay runs one schedule (a seed's, or a file's) --repeat times,
// tells how often it failed, and shrinks a failing one.
func runReplay(t testingT, c config) {
	var s *schedule.Schedule
	if c.replay != "" {
		b, err := os.ReadFile(c.replay)
		if err != nil {
			fatal("%v", err)
		}
		if s, err = schedule.Parse(b); err != nil {
			fatal("%v", err)
		}
	} else {
		opts, err := c.options()
		if err != nil {
			fatal("%v", err)
		}
		s = schedule.Generate(c.seed, opts)
	}
	n := max(c.repeat, 1)
	failed := 0
	var first *sim.Result
	for i := range n {
		var trace bytes.Buffer
		o := sim.Options{StrictLeftovers: c.strict}
		if c.trace {
			o.Trace = &trace
		}
		res := sim.Run(t, s, o)
		if res.Failed() {
			failed++
			if first == nil {
				first = res
			}
		}
		if c.trace && (i == 0 || (res.Failed() && failed == 1)) {
			os.Stdout.Write(trace.Bytes())
		}
		if i == 0 || (res.Failed() && failed == 1) {
			fmt.Printf("%s\n%s", res.Summary(), res.Details())
		}
	}
	fmt.Printf("seed %d: failed %d of %d runs\n", s.Seed, failed, n)
	if first == nil {
		return
	}
	t.Fail()
	if !c.shrink {
		return
	}
	small, res, runs := sim.Shrink(t, s, first, sim.ShrinkOptions{Run: sim.Options{StrictLeftovers: c.strict}})
	path := filepath.Join(c.out, "seed-"+strconv.FormatUint(s.Seed, 10)+".json")
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		fatal("%v", err)
	}
	if err := os.WriteFile(path, small.JSON(), 0o644); err != nil {
		fatal("%v", err)
	}
	fmt.Printf("\nshrunk in %d runs from %d to %d faults and operations: %s\n%s%s", runs, s.Size(), small.Size(), res.Summary(), res.Details(), small.Describe())
	fmt.Printf("  replay the shrunk schedule: go run ./sim/cmd/sim --replay %s --repeat 10 (add --trace for every command)\n", path)
}
