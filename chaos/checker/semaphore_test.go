package checker_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

// permit is the grant of a hold of a semaphore of k permits.
func permit(lock int64, key string, k int, at, until time.Duration) checker.Event {
	e := grant(lock, key, at, until)
	e.Shared, e.Permits = true, k
	return e
}

// excess lists the locks whose start put their semaphore over its permits.
func excess(r checker.Result) []int64 {
	var locks []int64
	for _, v := range r.Violations {
		if v.Invariant == checker.AtMostPermits {
			locks = append(locks, v.Lock)
		}
	}
	return locks
}

func TestAtMostPermitsHandMade(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []checker.Event
		want   []int64
	}{
		{"K holders at once", []checker.Event{
			permit(1, "s", 2, 0, 100*ms), permit(2, "s", 2, 10*ms, 100*ms),
		}, nil},
		{"K+1 holders at once", []checker.Event{
			permit(1, "s", 2, 0, 100*ms), permit(2, "s", 2, 10*ms, 100*ms), permit(3, "s", 2, 20*ms, 100*ms),
		}, []int64{3}},
		{"the third starts as the first is released", []checker.Event{
			permit(1, "s", 2, 0, 100*ms), release(1, 20*ms),
			permit(2, "s", 2, 10*ms, 100*ms), permit(3, "s", 2, 20*ms, 100*ms),
		}, nil},
		{"the third starts as the first's Until passes", []checker.Event{
			permit(1, "s", 2, 0, 20*ms),
			permit(2, "s", 2, 10*ms, 100*ms), permit(3, "s", 2, 20*ms, 100*ms),
		}, nil},
		{"one nanosecond of excess", []checker.Event{
			permit(1, "s", 2, 0, 20*ms),
			permit(2, "s", 2, 10*ms, 100*ms), permit(3, "s", 2, 20*ms-1, 100*ms),
		}, []int64{3}},
		{"an Extend lowered the first's Until below the third's start", []checker.Event{
			permit(1, "s", 2, 0, 100*ms), {Kind: checker.Extended, Lock: 1, At: 5 * ms, Until: 15 * ms},
			permit(2, "s", 2, 10*ms, 100*ms), permit(3, "s", 2, 20*ms, 100*ms),
		}, nil},
		{"an Extend moved the first's Until past the third's start", []checker.Event{
			permit(1, "s", 2, 0, 15*ms), {Kind: checker.Extended, Lock: 1, At: 5 * ms, Until: 100 * ms},
			permit(2, "s", 2, 10*ms, 100*ms), permit(3, "s", 2, 20*ms, 100*ms),
		}, []int64{3}},
		{"keys apart", []checker.Event{
			permit(1, "s", 1, 0, 100*ms), permit(2, "t", 1, 10*ms, 100*ms),
		}, nil},
		{"each start over K counts", []checker.Event{
			permit(1, "s", 1, 0, 100*ms), permit(2, "s", 1, 10*ms, 100*ms), permit(3, "s", 1, 20*ms, 30*ms),
			permit(4, "s", 1, 40*ms, 100*ms),
		}, []int64{2, 3, 4}},
		{"plain holds are mutual exclusion's", []checker.Event{
			grant(1, "s", 0, 100*ms), grant(2, "s", 10*ms, 100*ms), permit(3, "s", 2, 20*ms, 100*ms),
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checker.Check(tc.events)
			if got := excess(r); !slices.Equal(got, tc.want) {
				t.Fatalf("excess holds %v, want %v (%v)", got, tc.want, r.Violations)
			}
			if tc.name != "plain holds are mutual exclusion's" && len(r.Overlaps) > 0 {
				t.Fatalf("semaphore holds reported as overlaps: %v", pairs(r))
			}
			if by := r.ByInvariant(); by[checker.AtMostPermits] != len(tc.want) {
				t.Fatalf("ByInvariant counts %d, want %d", by[checker.AtMostPermits], len(tc.want))
			}
		})
	}
}

// The sweep agrees with a brute-force count at every start, over random
// histories of several keys with releases and Extends.
func TestAtMostPermitsAgainstReference(t *testing.T) {
	found := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 7))
		var events []checker.Event
		for lock := int64(1); lock <= 3+int64(rng.IntN(25)); lock++ {
			n := rng.IntN(2)
			key := fmt.Sprint("s", n)
			at := time.Duration(rng.IntN(100)) * ms
			until := at + time.Duration(rng.IntN(60))*ms
			events = append(events, permit(lock, key, 1+n, at, until))
			if rng.IntN(3) == 0 {
				events = append(events, release(lock, at+time.Duration(rng.IntN(60))*ms))
			}
			if rng.IntN(4) == 0 {
				events = append(events, checker.Event{Kind: checker.Extended, Lock: lock,
					At: at + time.Duration(rng.IntN(30))*ms, Until: at + time.Duration(rng.IntN(90))*ms})
			}
		}
		r := checker.Check(events)
		// Reference: a hold is in excess when, at its start, more holds of
		// its key contain that instant than it has permits.
		var want []int64
		for _, a := range r.Intervals {
			if a.End <= a.Start {
				continue
			}
			n := 0
			for _, b := range r.Intervals {
				if b.Key == a.Key && b.Start <= a.Start && a.Start < b.End &&
					(b.Start < a.Start || b.Lock <= a.Lock) {
					n++
				}
			}
			if n > a.Permits {
				want = append(want, a.Lock)
			}
		}
		got := excess(r)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: excess %v, reference %v", seed, got, want)
		}
		found += len(want)
	}
	if found == 0 {
		t.Fatal("no history in excess: the test checks nothing")
	}
}
