package sim

import (
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/sim/schedule"
)

// Explore runs schedules drawn from consecutive seeds, one after another in
// this goroutine, each in a bubble of its own.
type Explore struct {
	// From is the first seed; Step the distance between seeds (a worker i
	// of n explores From+i, From+i+n, ...): 0 means 1.
	From, Step uint64
	// Schedules bounds the number of schedules (0: no bound), Budget the
	// wall-clock time (0: no bound); one of them must be set.
	Schedules int
	Budget    time.Duration
	// Options shape the schedules.
	Options schedule.Options
	// StopAtFailure ends the exploration at the first failing schedule.
	StopAtFailure bool
	// OnFailure, if set, is told of every failing schedule.
	OnFailure func(*Result, *schedule.Schedule)
	// Runs are the options of every run.
	Runs Options
}

// Summary is what an exploration found and what it cost.
type Summary struct {
	Schedules, Failed int
	Ops, Grants       int
	// Virtual is the simulated time of all the schedules; Wall and CPU
	// the real time and the process's CPU time they took.
	Virtual, Wall, CPU time.Duration
	// First is the first failing schedule's result (nil: none).
	First *Result
	// FirstSchedule is its schedule.
	FirstSchedule *schedule.Schedule `json:"-"`
}

// Add adds o's counts to s (for workers' summaries).
func (s *Summary) Add(o Summary) {
	s.Schedules += o.Schedules
	s.Failed += o.Failed
	s.Ops += o.Ops
	s.Grants += o.Grants
	s.Virtual += o.Virtual
	s.CPU += o.CPU
	s.Wall = max(s.Wall, o.Wall)
	if s.First == nil {
		s.First, s.FirstSchedule = o.First, o.FirstSchedule
	}
}

// Run explores; t hosts the bubbles (a test's, or the command's).
func (e Explore) Run(t *testing.T) Summary {
	step := max(e.Step, 1)
	var sum Summary
	start, cpu0 := time.Now(), CPUTime()
	for seed := e.From; ; seed += step {
		if e.Schedules > 0 && sum.Schedules >= e.Schedules {
			break
		}
		if e.Budget > 0 && time.Since(start) >= e.Budget {
			break
		}
		s := schedule.Generate(seed, e.Options)
		res := Run(t, s, e.Runs)
		sum.Schedules++
		sum.Ops += res.Ops
		sum.Grants += res.Grants
		sum.Virtual += res.Virtual
		if !res.Failed() {
			continue
		}
		sum.Failed++
		if sum.First == nil {
			sum.First, sum.FirstSchedule = res, s
		}
		if e.OnFailure != nil {
			e.OnFailure(res, s)
		}
		if e.StopAtFailure {
			break
		}
	}
	sum.Wall, sum.CPU = time.Since(start), CPUTime()-cpu0
	return sum
}

// Replay runs s n times and returns how many of the runs failed, and the
// first failing run's result: where Go's scheduling of goroutines makes a
// run differ, a seed reproduces only some of the time.
func Replay(t *testing.T, s *schedule.Schedule, n int) (failed int, first *Result) {
	for range n {
		res := Run(t, s)
		if res.Failed() {
			failed++
			if first == nil {
				first = res
			}
		}
	}
	return failed, first
}

// CPUTime is the CPU time this process used so far (user and system).
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
