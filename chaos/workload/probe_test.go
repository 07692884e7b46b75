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
	if len(ps) != 21 {
		t.Fatalf("Probes(all kinds) = %v, want the 21 probes", ps)
	}
	if err := workload.RunProbes(context.Background(), e, ps, 1); err != nil {
		t.Fatal(err)
	}
	events := e.History.Events()
	r := checker.Check(events)
	if !r.Holds() {
		t.Errorf("%d overlaps, violations %v", len(r.Overlaps), r.Violations)
	}
	if vs := checker.OutOfOrder(events); len(vs) > 0 {
		t.Errorf("fair waiters served out of order: %v", vs)
	}
	// fair-order queued three waiters, each seen registered, and crashed
	// the first; renew-held renewed a lock and a Do twice, and cut the
	// links of the second pair, which were lost; extend-context's lock
	// was lost when its lowered Until passed.
	n := map[checker.Kind]int{}
	renewed := 0
	for _, ev := range events {
		n[ev.Kind]++
		if ev.Kind == checker.Granted && ev.Renewed {
			renewed++
		}
	}
	if n[checker.Registered] < 3 || n[checker.Crashed] != 1 || renewed != 4 || n[checker.Lost] != 3 {
		t.Errorf("%d registered, %d crashed, %d renewed, %d lost: want at least 3, 1, 4, 3", n[checker.Registered], n[checker.Crashed], renewed, n[checker.Lost])
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
	if kinds[fault.Multi] != 3 || kinds[fault.Slow] != 17 || kinds[fault.Cut] != 7 {
		t.Errorf("faults applied %v, want 3 multi, 17 slow (2 short-extend, 3 late-extend, 1 late-noscript, 3 late-read-extend, 5 give-up, 3 fair-order) and 7 cut (1 semaphore-full, 6 renew-held)", kinds)
	}
}
