package checker

import (
	"container/heap"
	"fmt"
	"strings"
)

// AtMostPermits: at no instant do more holds of a semaphore's key overlap
// than it has permits. A hold is the interval the other invariants use:
// from its grant to its release, or to the end of its holder's belief in
// it (its Until, as Extended moved it), whichever comes first.
const AtMostPermits Invariant = "at-most-permits"

// permits sweeps each key's semaphore holds (Permits > 0) by start, keeping
// the ones still open in a min-heap by end, and reports every hold whose
// start makes more of them overlap than its Permits: the number of holds
// rises only when one starts, so these are all the instants of excess.
// Intervals are half-open: a hold that ends when another starts does not
// overlap it. intervals are ordered by key and start. It runs in O(n log
// n) plus the size of what it reports.
func permits(intervals []Interval) []Violation {
	var (
		vs   []Violation
		open endHeap
	)
	for i, iv := range intervals {
		if i == 0 || intervals[i-1].Key != iv.Key {
			open = open[:0]
		}
		if iv.Permits <= 0 || iv.End <= iv.Start {
			continue // not a semaphore's hold, or empty: overlaps nothing
		}
		for len(open) > 0 && open[0].End <= iv.Start {
			heap.Pop(&open)
		}
		heap.Push(&open, iv)
		if len(open) <= iv.Permits {
			continue
		}
		others := make([]string, 0, len(open)-1)
		for _, o := range open {
			if o.Lock != iv.Lock {
				others = append(others, fmt.Sprintf("%d (client %d)", o.Lock, o.Client))
			}
		}
		vs = append(vs, Violation{Invariant: AtMostPermits, Key: iv.Key, Lock: iv.Lock, Client: iv.Client, At: iv.Start,
			Detail: fmt.Sprintf("lock %d is hold %d of a semaphore of %d permits; also held by locks %s",
				iv.Lock, len(open), iv.Permits, strings.Join(others, ", "))})
	}
	return vs
}
