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
	if len(ps) != 25 {
		t.Fatalf("Probes(all kinds) = %v, want the 25 probes", ps)
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
	// the first; renew-held renewed a lock and a Do on each of its two
	// keys twice: the first pair on healthy masters, which must not be
	// lost, the second with its links cut, which must be.
	n := map[checker.Kind]int{}
	lost := map[int64]bool{}
	var renewed []checker.Event
	for _, ev := range events {
		n[ev.Kind]++
		switch {
		case ev.Kind == checker.Lost:
			lost[ev.Lock] = true
		case ev.Kind == checker.Granted && ev.Renewed:
			renewed = append(renewed, ev)
		}
	}
	if n[checker.Registered] < 3 || n[checker.Crashed] != 1 {
		t.Errorf("%d registered, %d crashed: want at least 3, and 1", n[checker.Registered], n[checker.Crashed])
	}
	// fence-ahead: the second quorum's token follows the first's, which
	// master 0's counter, a minute ahead, gave: written back to master 1.
	var fences []int64
	for _, ev := range events {
		if ev.Kind == checker.Granted && ev.Key == "probe-fence-ahead-0" {
			fences = append(fences, ev.Token)
		}
	}
	if len(fences) != 2 || fences[1] != fences[0]+1 {
		t.Errorf("fence-ahead tokens %v, want two, the second the first + 1", fences)
	}
	seen := map[string]int{}
	for _, g := range renewed {
		cut := seen[g.Key] > 0
		seen[g.Key]++
		if lost[g.Lock] != cut {
			t.Errorf("renewed hold %d of %s (links cut: %t): lost %t", g.Lock, g.Key, cut, lost[g.Lock])
		}
	}
	if len(renewed) != 4 || len(seen) != 2 {
		t.Errorf("%d renewed holds of %d keys, want 4 of 2", len(renewed), len(seen))
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
	if kinds[fault.Multi] != 6 || kinds[fault.Slow] != 20 || kinds[fault.Cut] != 8 || kinds[fault.Reset] != 1 {
		t.Errorf("faults applied %v, want 6 multi, 20 slow (2 short-extend, 3 late-extend, 2 late-noscript, 2 fence-ahead, 3 late-read-extend, 5 give-up, 3 fair-order), 8 cut (1 semaphore-full, 6 renew-held, 1 release-retried) and 1 reset (release-retried)", kinds)
	}
}
