package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// NoStarvation: while an acquire call of a fair lock waited, the lock never
// lay free (no hold of its key recorded) for longer than a bound in one
// stretch. A fair lock serves the first waiter in line as soon as the lock
// is free; a free lock with waiters means that nobody is served. Checked
// by Starvation, for the keys of fair locks only.
const NoStarvation Invariant = "no-starvation"

// Starvation checks NoStarvation on the acquire calls (Granted and
// Attempted events) of the keys for which fair reports true: within each
// call, from its invocation to its response, no stretch without a hold of
// the key (intervals, as Check returns them) may last longer than bound. A
// granted call's own hold begins at its response, so its wait ends there.
func Starvation(events []Event, intervals []Interval, fair func(key string) bool, bound time.Duration) []Violation {
	return StarvationAfterSetup(events, intervals, fair, bound, 0)
}

// StarvationAfterSetup is Starvation for clients whose first calls also
// set them up (connections dialled, the restart guard's first read and
// write of every master's record, the scripts' first load) until setup
// from the start of the history: a call invoked before setup may wait
// what is left of it on top of bound.
func StarvationAfterSetup(events []Event, intervals []Interval, fair func(key string) bool, bound, setup time.Duration) []Violation {
	busy := map[string][]Interval{} // per key, ordered by start
	for _, iv := range intervals {
		if fair(iv.Key) {
			busy[iv.Key] = append(busy[iv.Key], iv)
		}
	}
	for _, ivs := range busy {
		slices.SortStableFunc(ivs, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	}
	var vs []Violation
	for _, e := range events {
		if (e.Kind != Granted && e.Kind != Attempted) || !fair(e.Key) {
			continue
		}
		from, longest := freeStretch(busy[e.Key], e.Call, e.At)
		if b := bound + max(setup-e.Call, 0); longest > b {
			vs = append(vs, Violation{Invariant: NoStarvation, Key: e.Key, Lock: e.Lock, Client: e.Client, At: from,
				Detail: fmt.Sprintf("an acquire called at %v waited until %v; from %v the lock lay free for %v (bound %v)",
					e.Call, e.At, from, longest, b)})
		}
	}
	slices.SortStableFunc(vs, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
	return vs
}

// freeStretch returns the longest stretch of [from, to) that no interval of
// busy (ordered by start) covers, and where it begins.
func freeStretch(busy []Interval, from, to time.Duration) (at, longest time.Duration) {
	cursor := from
	note := func(end time.Duration) {
		if end-cursor > longest {
			at, longest = cursor, end-cursor
		}
	}
	for _, iv := range busy {
		if iv.Start >= to {
			break
		}
		if iv.End <= cursor {
			continue
		}
		if iv.Start > cursor {
			note(iv.Start)
		}
		cursor = iv.End
		if cursor >= to {
			return at, longest
		}
	}
	note(to)
	return at, longest
}
