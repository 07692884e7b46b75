package checker_test

import (
	"time"

	"testing"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

func hold(lock int64, key, owner string, shared bool, token int64, at, until int64) checker.Event {
	return checker.Event{Kind: checker.Granted, Lock: lock, Client: int(lock), Key: key, Owner: owner, Shared: shared,
		Token: token, At: ms * time.Duration(at), Until: ms * time.Duration(until)}
}

func TestCompatibleHolds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []checker.Event
		want   int
	}{
		{"two readers", []checker.Event{hold(1, "k", "", true, 0, 0, 100), hold(2, "k", "", true, 0, 10, 100)}, 0},
		{"reader and writer", []checker.Event{hold(1, "k", "", true, 0, 0, 100), hold(2, "k", "", false, 1, 10, 100)}, 1},
		{"one owner nested", []checker.Event{hold(1, "k", "a", false, 1, 0, 100), hold(2, "k", "a", false, 1, 10, 50)}, 0},
		{"two owners", []checker.Event{hold(1, "k", "a", false, 1, 0, 100), hold(2, "k", "b", false, 2, 10, 50)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := checker.Check(tc.events); len(r.Overlaps) != tc.want {
				t.Errorf("overlaps = %v, want %d", r.Overlaps, tc.want)
			}
		})
	}
}

func TestExtendedMovesTheEnd(t *testing.T) {
	ext := func(lock int64, at, until time.Duration) checker.Event {
		return checker.Event{Kind: checker.Extended, Lock: lock, At: ms * at, Until: ms * until}
	}
	// Lock 1 is extended before its Until to 300ms: it overlaps lock 2.
	r := checker.Check([]checker.Event{hold(1, "k", "", false, 1, 0, 100), ext(1, 50, 300), hold(2, "k", "", false, 2, 200, 400)})
	if len(r.Overlaps) != 1 {
		t.Errorf("extended: overlaps = %v, want 1", r.Overlaps)
	}
	// An extension noted after the Until passed revives nothing.
	r = checker.Check([]checker.Event{hold(1, "k", "", false, 1, 0, 100), ext(1, 150, 300), hold(2, "k", "", false, 2, 200, 400)})
	if len(r.Overlaps) != 0 || r.Intervals[0].End != 100*ms {
		t.Errorf("late extension: overlaps = %v, intervals %v", r.Overlaps, r.Intervals)
	}
}

func TestViolations(t *testing.T) {
	sample := func(lock int64, at, until, expire time.Duration) checker.Event {
		return checker.Event{Kind: checker.Sampled, Lock: lock, At: ms * at, Until: ms * until, Expire: ms * expire}
	}
	r := checker.Check([]checker.Event{
		hold(1, "k", "", false, 5, 0, 100),
		sample(1, 1, 100, 101),                                                   // fine
		sample(1, 2, 100, 99),                                                    // 1ms early: within the tolerance
		sample(1, 3, 100, 90),                                                    // 10ms early: a violation
		hold(2, "k", "", false, 5, 200, 300),                                     // the same token again
		hold(3, "k", "", false, 4, 400, 500),                                     // a lower one
		hold(4, "j", "a", false, 7, 0, 100), hold(5, "j", "a", false, 7, 10, 50), // one owner: may repeat
		{Kind: checker.Leftover, Client: 2, Key: "k", At: 600 * ms, Detail: "left"},
		{Kind: checker.Remained, Client: 2, Key: "k", At: 700 * ms, Detail: "{k}:wq on master 3"},
		{Kind: checker.Coexisted, Client: 1, Key: "rw", At: 800 * ms, Detail: "a reader beside the writer on master 1"},
	})
	got := r.ByInvariant()
	want := map[checker.Invariant]int{checker.MutualExclusion: 0, checker.UntilWithinExpiry: 1, checker.NoKeyLeft: 1, checker.FenceIncreases: 2,
		checker.NothingLeft: 1, checker.NoReaderBesideWriter: 1, checker.RenewalHolds: 0, checker.ContextWithinUntil: 0}
	if len(got) != len(checker.Invariants) {
		t.Errorf("ByInvariant has %d entries, want one per invariant (%d)", len(got), len(checker.Invariants))
	}
	for inv, n := range want {
		if got[inv] != n {
			t.Errorf("%s: %d violations, want %d (%v)", inv, got[inv], n, r.Violations)
		}
	}
	if r.Holds() {
		t.Error("Holds() with violations")
	}
}
