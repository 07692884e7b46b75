package sim_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/sim"
	"github.com/quorumlock/quorumlock/sim/schedule"
)

// commandDefaults are the schedules' options of the command's defaults
// (go run ./sim/cmd/sim, with --strict-leftovers), so that a failing
// seed's replay command replays it.
var commandDefaults = schedule.Options{FencedResume: true}

// TestExplore runs schedules of every kind and fault: none may fail. (The
// command explores far more: go run ./sim/cmd/sim.)
func TestExplore(t *testing.T) {
	n := 300
	if testing.Short() || raceEnabled {
		n = 60
	}
	sum := sim.Explore{From: 1, Schedules: n, Options: commandDefaults, Runs: sim.Options{StrictLeftovers: true}, OnFailure: func(r *sim.Result, s *schedule.Schedule) {
		t.Errorf("%s\n%s\nreplay: go run ./sim/cmd/sim --seed %d", r.Summary(), r.Details(), s.Seed)
	}}.Run(t)
	t.Logf("%d schedules, %d grants, %v simulated in %v", sum.Schedules, sum.Grants, sum.Virtual.Round(time.Second), sum.Wall.Round(time.Millisecond))
	if sum.Grants < n {
		t.Errorf("%d grants in %d schedules: the workload barely locks", sum.Grants, n)
	}
}

// TestExploreFromTheClock explores schedules from a seed drawn from the
// clock, printed, so that each CI run looks somewhere new and a failure
// replays: QUORUMLOCK_SIM_FROM=N runs the same range again, and each
// failing seed prints its own replay command.
func TestExploreFromTheClock(t *testing.T) {
	from := uint64(time.Now().UnixNano()%1e9) * 1000
	if v := os.Getenv("QUORUMLOCK_SIM_FROM"); v != "" {
		var err error
		if from, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("QUORUMLOCK_SIM_FROM=%q: %v", v, err)
		}
	}
	n := 150
	if testing.Short() || raceEnabled {
		n = 30
	}
	t.Logf("schedules %d to %d; the same range again: cd sim && QUORUMLOCK_SIM_FROM=%d go test -run TestExploreFromTheClock .", from, from+uint64(n)-1, from)
	sum := sim.Explore{From: from, Schedules: n, Options: commandDefaults, Runs: sim.Options{StrictLeftovers: true}, OnFailure: func(r *sim.Result, s *schedule.Schedule) {
		t.Errorf("%s\n%s\nreplay: go run ./sim/cmd/sim --seed %d (this range: QUORUMLOCK_SIM_FROM=%d)", r.Summary(), r.Details(), s.Seed, from)
	}}.Run(t)
	if sum.Schedules != n {
		t.Errorf("%d schedules run, want %d", sum.Schedules, n)
	}
}

// TestEveryKindGrants checks that each kind of operation is exercised:
// schedules of that kind alone grant locks.
func TestEveryKindGrants(t *testing.T) {
	for _, k := range schedule.Kinds {
		t.Run(string(k), func(t *testing.T) {
			sum := sim.Explore{From: 100, Schedules: 5, Options: schedule.Options{Kinds: []schedule.Kind{k}, NoFaults: true}, OnFailure: func(r *sim.Result, s *schedule.Schedule) {
				t.Errorf("%s\n%s", r.Summary(), r.Details())
			}}.Run(t)
			if sum.Grants == 0 {
				t.Errorf("no %s lock granted in %d schedules", k, sum.Schedules)
			}
		})
	}
}

// TestDefectFoundAndShrunk checks the other side: with a defect put into
// the release script (it deletes the lock key whoever holds it, the
// chaos suite's release-ignores-token), schedules fail, and a failing
// schedule shrinks to a smaller one that still fails.
func TestDefectFoundAndShrunk(t *testing.T) {
	defect := sim.Options{Rewrite: func(src string) string {
		return strings.Replace(src, "if redis.call('GET', KEYS[2]) == ARGV[1] then\n  redis.call('DEL', KEYS[2])",
			"if redis.call('EXISTS', KEYS[2]) == 1 then\n  redis.call('DEL', KEYS[2])", 1)
	}}
	var failing *schedule.Schedule
	var res *sim.Result
	sim.Explore{From: 1, Schedules: 300, StopAtFailure: true, Runs: defect, Options: schedule.Options{Kinds: []schedule.Kind{schedule.Plain, schedule.Fenced}},
		OnFailure: func(r *sim.Result, s *schedule.Schedule) { failing, res = s, r }}.Run(t)
	if failing == nil {
		t.Fatal("300 schedules passed with a release that ignores the token")
	}
	t.Logf("seed %d fails: %s", failing.Seed, res.Summary())
	small, sres, runs := sim.Shrink(t, failing, res, sim.ShrinkOptions{MaxRuns: 150, Run: defect})
	if small.Size() >= failing.Size() || !sres.Failed() {
		t.Fatalf("shrink in %d runs: %d -> %d, still failing: %v", runs, failing.Size(), small.Size(), sres.Failed())
	}
	t.Logf("shrunk from %d to %d faults and operations in %d runs: %s", failing.Size(), small.Size(), runs, sres.Summary())
}
