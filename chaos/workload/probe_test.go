package workload_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// On the correct library every probe leaves a history that holds every
// invariant, and each probe's fault really met its call: replies were
// dropped on the probed client's links, the MULTIs were refused, slowed
// extends were logged, and the rw and reentrant tries were refused (every
// hold is recorded).
func TestProbesHoldOnTheLibrary(t *testing.T) {
	e := newEnv(t, 2)
	ps := workload.Probes(workload.Kinds)
	if len(ps) != 10 {
		t.Fatalf("Probes(all kinds) = %v, want the 10 probes", ps)
	}
	if err := workload.RunProbes(context.Background(), e, ps, 1); err != nil {
		t.Fatal(err)
	}
	r := checker.Check(e.History.Events())
	if !r.Holds() {
		t.Errorf("%d overlaps, violations %v", len(r.Overlaps), r.Violations)
	}
	dropped := 0
	for c := range 2 {
		for j := range 3 {
			dropped += e.Net.Link(c, j).Stats().Dropped
		}
	}
	// drop-private arms every link of one client; its TryLock cannot fail
	// before a quorum (2 of 3) of its replies were dropped.
	if dropped < 2 {
		t.Errorf("%d replies dropped, want at least 2", dropped)
	}
	kinds := map[fault.Kind]int{}
	for _, a := range e.Faults.Log() {
		kinds[a.Fault.Kind]++
		if a.Fault.Kind == fault.Multi && !strings.Contains(a.Note, "refused") {
			t.Errorf("MULTI on a shared connection: %s", a.Note)
		}
	}
	if kinds[fault.Multi] != 3 || kinds[fault.Slow] != 6 {
		t.Errorf("faults applied %v, want 3 multi and 6 slow (2 short-extend, 3 late-extend, 1 late-noscript)", kinds)
	}
}
