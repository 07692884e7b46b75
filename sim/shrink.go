package sim

import (
	"slices"
	"testing"

	"github.com/quorumlock/quorumlock/sim/schedule"
)

// Shrinking. A failing schedule is made smaller, greedily, while it still
// fails the same way (one of the invariants it violated, or a hang, or the
// checkers disagreeing): whole faults and operations are dropped, first in
// halves then one by one, then what an operation does beyond its acquire
// (its Extends, nested holds, watched context, ended contexts). A run
// depends on the goroutines' scheduling as well as on the schedule, so a
// candidate counts as failing when any of Tries runs fails.

// ShrinkOptions bound a shrink.
type ShrinkOptions struct {
	// Tries is how many times a candidate runs before it counts as
	// passing; 0 means 3.
	Tries int
	// MaxRuns bounds the runs of the whole shrink; 0 means 400.
	MaxRuns int
	// Run are the options of every run.
	Run Options
}

// Signature is how a result failed: the invariants it violated, "overlap"
// for mutual exclusion, "hung", "disagree", "error".
func Signature(r *Result) []string {
	var sig []string
	if len(r.Checked.Overlaps) > 0 {
		sig = append(sig, "overlap")
	}
	for _, v := range r.Violations {
		sig = append(sig, string(v.Invariant))
	}
	if r.Hung {
		sig = append(sig, "hung")
	}
	if !r.Agree {
		sig = append(sig, "disagree")
	}
	if r.Err != nil {
		sig = append(sig, "error")
	}
	slices.Sort(sig)
	return slices.Compact(sig)
}

// Shrink returns the smallest schedule it found that still fails as res
// (the result of s) did, with its failing result, and the runs it made.
func Shrink(t *testing.T, s *schedule.Schedule, res *Result, o ShrinkOptions) (*schedule.Schedule, *Result, int) {
	tries := o.Tries
	if tries <= 0 {
		tries = 3
	}
	maxRuns := o.MaxRuns
	if maxRuns <= 0 {
		maxRuns = 400
	}
	want := Signature(res)
	runs := 0
	// fails runs c up to tries times and returns a failing result like
	// res, or nil.
	fails := func(c *schedule.Schedule) *Result {
		for range tries {
			if runs >= maxRuns {
				return nil
			}
			runs++
			r := Run(t, c, o.Run)
			if r.Failed() && overlaps(Signature(r), want) {
				return r
			}
		}
		return nil
	}
	best, bestRes := s.Clone(), res
	try := func(c *schedule.Schedule) bool {
		if r := fails(c); r != nil {
			best, bestRes = c, r
			return true
		}
		return false
	}
	for progress := true; progress && runs < maxRuns; {
		progress = false
		// Faults: halves, then one at a time.
		progress = removeChunks(len(best.Faults), func(from, to int) bool {
			c := best.Clone()
			c.Faults = slices.Delete(c.Faults, from, to)
			return try(c)
		}) || progress
		// Operations, client by client.
		for cl := range best.Ops {
			progress = removeChunks(len(best.Ops[cl]), func(from, to int) bool {
				c := best.Clone()
				c.Ops[cl] = slices.Delete(c.Ops[cl], from, to)
				return try(c)
			}) || progress
		}
		// What operations do beyond their acquire.
		for cl := range best.Ops {
			for j := range best.Ops[cl] {
				for _, simplify := range simplifications {
					c := best.Clone()
					if !simplify(&c.Ops[cl][j]) {
						continue
					}
					progress = try(c) || progress
				}
			}
		}
	}
	return best, bestRes, runs
}

// overlaps reports whether a and b (sorted) share an element.
func overlaps(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); ok {
			return true
		}
	}
	return false
}

// removeChunks tries to remove ranges of n items, halves first, then
// smaller chunks down to single items; remove(from, to) reports whether
// the schedule without [from, to) still fails (and was kept). It reports
// whether anything was removed.
func removeChunks(n int, remove func(from, to int) bool) bool {
	removed := false
	for size := max(n/2, 1); size >= 1 && n > 0; size /= 2 {
		for from := 0; from+size <= n; {
			if remove(from, from+size) {
				n -= size
				removed = true
				continue
			}
			from += size
		}
		if size == 1 {
			break
		}
	}
	return removed
}

// simplifications each drop one thing an operation does, reporting false
// when it had nothing to drop.
var simplifications = []func(*schedule.Op) bool{
	func(o *schedule.Op) bool { ok := len(o.Extends) > 0; o.Extends = nil; return ok },
	func(o *schedule.Op) bool { ok := len(o.Nested) > 0; o.Nested = nil; return ok },
	func(o *schedule.Op) bool { ok := o.Watch; o.Watch = false; return ok },
	func(o *schedule.Op) bool { ok := o.EndedUnlock; o.EndedUnlock = false; return ok },
	func(o *schedule.Op) bool { ok := o.Stall; o.Stall = false; return ok },
	func(o *schedule.Op) bool { ok := o.Late || o.Stale; o.Late, o.Stale = false, false; return ok },
}
