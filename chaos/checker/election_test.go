package checker_test

import (
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

// leader is a leadership of client c in term t, from start to end, with
// its campaign's value and the values it proclaimed at the times given.
func leader(c int, t int64, start, end time.Duration, value string, proclaimed ...any) checker.Leadership {
	l := checker.Leadership{Client: c, Term: t, Call: start - ms, Start: start, End: end, How: "resign",
		Versions: []checker.Version{{Value: value, From: start}}}
	for i := 0; i+1 < len(proclaimed); i += 2 {
		at := proclaimed[i+1].(time.Duration)
		l.Versions = append(l.Versions, checker.Version{Value: proclaimed[i].(string), Called: at - ms, From: at})
	}
	return l
}

// campaigned maps each leader's values to its term.
func campaigned(ls ...checker.Leadership) map[string]int64 {
	m := map[string]int64{}
	for _, l := range ls {
		for _, v := range l.Versions {
			m[v.Value] = l.Term
		}
	}
	return m
}

func count(vs []checker.Violation) map[checker.Invariant]int {
	n := map[checker.Invariant]int{}
	for _, v := range vs {
		n[v.Invariant]++
	}
	return n
}

func TestElectionClean(t *testing.T) {
	a := leader(0, 10, 0, 400*ms, "a")
	b := leader(1, 20, 500*ms, 1000*ms, "b", "b2", 700*ms)
	h := checker.ElectionHistory{
		Key:        "e",
		Leaders:    []checker.Leadership{b, a}, // any order
		Campaigned: campaigned(a, b),
		Reads: []checker.Read{
			{Client: 2, Call: 100 * ms, At: 101 * ms, Term: 10, Value: "a"},
			{Client: 2, Call: 490 * ms, At: 510 * ms, Term: 20, Value: "b"}, // invoked before b's Campaign returned: not stale
		},
		Watches: []checker.Watch{{Client: 3, From: 0, To: 1100 * ms, Got: []checker.Delivery{
			{At: 10 * ms, Term: 10, Value: "a"}, {At: 510 * ms, Term: 20, Value: "b"}, {At: 710 * ms, Term: 20, Value: "b2"}}}},
		Actions:   []checker.Action{{Client: 0, Lock: 1, Term: 10, At: 100 * ms, Accepted: true}},
		Handovers: []checker.Handover{{Client: 0, Term: 10, How: "resign", At: 400 * ms, Bound: 200 * ms}},
	}
	cov := checker.Coverage{Window: 150 * ms, Spans: [][2]time.Duration{{0, 2 * time.Second}}}
	if vs := checker.CheckElection(h, cov, nil); len(vs) != 0 {
		t.Errorf("violations on a clean history: %v", vs)
	}
}

func TestElectionViolations(t *testing.T) {
	a := leader(0, 10, 0, 400*ms, "a")
	b := leader(1, 10, 500*ms, 1000*ms, "b")  // term reused
	c := leader(2, 5, 1100*ms, 1500*ms, "c")  // term went back
	d := leader(3, 0, 1600*ms, 1700*ms, "d")  // no term
	e := leader(4, -1, 1800*ms, 1800*ms, "e") // lost at once: not judged
	f := leader(0, 30, 2000*ms, 3000*ms, "f", "f2", 2500*ms)
	a.Resigned = 410 * ms
	cov := checker.Coverage{Window: 200 * ms, Spans: [][2]time.Duration{{2000 * ms, 3000 * ms}}}
	h := checker.ElectionHistory{
		Key:        "e",
		Leaders:    []checker.Leadership{a, b, c, d, e, f},
		Campaigned: campaigned(a, b, c, d, e, f),
		Reads: []checker.Read{
			{Client: 1, Call: 450 * ms, At: 460 * ms, Term: 10, Value: "a"},   // a resigned before: stale
			{Client: 1, Call: 2100 * ms, At: 2110 * ms, Term: 10, Value: "b"}, // f returned before: stale
			{Client: 1, Call: 2200 * ms, At: 2210 * ms, Term: 31, Value: "f"}, // f's value, another term: untrue
		},
		Watches: []checker.Watch{
			{Client: 5, From: 0, To: 3000 * ms, Got: []checker.Delivery{
				{At: 2100 * ms, Term: 30, Value: "f"}, {At: 2200 * ms, Term: 30, Value: "f"}, // twice
				{At: 2300 * ms, Term: 10, Value: "a"},    // older term
				{At: 2400 * ms, Term: 40, Value: "zz"}}}, // no candidate's
			{Client: 6, From: 0, To: 3000 * ms, Got: []checker.Delivery{{At: 2100 * ms, Term: 30, Value: "f"}}}, // misses f2
			{Client: 7, From: 2900 * ms, To: 3000 * ms},                                                         // ran too briefly to be judged
			{Client: 8, From: 1900 * ms, To: 2700 * ms, Got: []checker.Delivery{
				{At: 2100 * ms, Term: 30, Value: "f"}, {At: 2600 * ms, Term: 30, Value: "f2"},
				{At: 2650 * ms, Term: 30, Value: "f"}}}, // f2, then the older f again
		},
		Actions: []checker.Action{
			{Client: 0, Lock: 1, Term: 10, At: 100 * ms, Accepted: false}, // refused while leading
			{Client: 0, Lock: 1, Term: 10, At: 450 * ms, Accepted: false}, // after its end: a late action, allowed
		},
		Handovers: []checker.Handover{
			{Client: 0, Term: 10, How: "resign", At: 400 * ms, Bound: 50 * ms}, // b came 100ms later
			{Client: 0, Term: 30, How: "crash", At: 3000 * ms, Bound: time.Second},
		},
	}
	intervals := []checker.Interval{{Lock: 1, Start: 0, End: 400 * ms}}
	n := count(checker.CheckElection(h, cov, intervals))
	want := map[checker.Invariant]int{
		checker.OneLeaderPerTerm:  2, // b's term, d's none
		checker.TermsIncrease:     2, // b, c
		checker.FencedActions:     1,
		checker.LeaderReadCurrent: 2,
		checker.ObserveTrue:       2, // the read of f's value in term 31, the delivery of "zz"
		checker.ObserveOrder:      3, // f twice, a after f, f after f2
		checker.ObserveCoverage:   2, // observers 5 and 6 got f, never f2
		checker.LeaderReplaced:    2,
	}
	for _, inv := range checker.ElectionInvariants {
		if n[inv] != want[inv] {
			t.Errorf("%s: %d violations, want %d", inv, n[inv], want[inv])
		}
	}
}

func TestElectionCoverageWindow(t *testing.T) {
	l := leader(0, 7, 1000*ms, 1300*ms, "x")
	h := checker.ElectionHistory{Leaders: []checker.Leadership{l}, Campaigned: campaigned(l),
		Watches: []checker.Watch{{Client: 1, From: 0, To: 5 * time.Second}}}
	for _, tc := range []struct {
		name   string
		window time.Duration
		spans  [][2]time.Duration
		miss   bool
	}{
		{"shorter than the window", 400 * ms, [][2]time.Duration{{0, 5 * time.Second}}, false},
		{"a whole window", 300 * ms, [][2]time.Duration{{0, 5 * time.Second}}, true},
		{"outside every span", 100 * ms, [][2]time.Duration{{0, 900 * ms}, {1400 * ms, 2 * time.Second}}, false},
		{"a span cuts it short", 200 * ms, [][2]time.Duration{{1150 * ms, 2 * time.Second}}, false},
		{"a span holds a window", 100 * ms, [][2]time.Duration{{1150 * ms, 2 * time.Second}}, true},
	} {
		vs := checker.CheckElection(h, checker.Coverage{Window: tc.window, Spans: tc.spans}, nil)
		if got := count(vs)[checker.ObserveCoverage] > 0; got != tc.miss {
			t.Errorf("%s: coverage violation %t, want %t (%v)", tc.name, got, tc.miss, vs)
		}
	}
}
