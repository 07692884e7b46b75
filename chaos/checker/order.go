package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// FairOrder: a fair lock serves its waiters in the order they arrived.
// A waiter that was seen registered on a quorum of the masters (Registered)
// at R has a ticket lower than that of any acquire called after R, and no
// master grants a later ticket while it is registered there. So no acquire
// called after R may be granted while that waiter still waits: before it was
// granted itself, gave up (its context ended) or crashed. Checked by
// OutOfOrder, on the keys whose waiters were registered; it assumes that the
// masters keep their data (a master restarted empty forgets the ticket
// counter and the registrations).
const FairOrder Invariant = "fair-order"

// callID identifies an acquire call: one client makes one call at a time.
type callID struct {
	client int
	key    string
	call   time.Duration
}

func idOf(e Event) callID { return callID{e.Client, e.Key, e.Call} }

// waiter is a registered call that waits, from its registration to the
// end of its wait.
type waiter struct {
	Event                   // the call's outcome (Granted or Attempted)
	from, end time.Duration // registered at from; served, gave up or crashed at end
}

// OutOfOrder checks FairOrder on events and returns the violations, by
// time: every grant of a call invoked after a waiting call was registered,
// and returned before that call's wait ended.
func OutOfOrder(events []Event) []Violation {
	registered := map[callID]time.Duration{}
	crashed := map[callID]time.Duration{}
	for _, e := range events {
		switch e.Kind {
		case Registered:
			if r, ok := registered[idOf(e)]; !ok || e.At < r {
				registered[idOf(e)] = e.At
			}
		case Crashed:
			if c, ok := crashed[idOf(e)]; !ok || e.At < c {
				crashed[idOf(e)] = e.At
			}
		}
	}
	var waiters []waiter
	grants := map[string][]Event{}
	for _, e := range events {
		if e.Kind != Granted && e.Kind != Attempted {
			continue
		}
		if e.Kind == Granted {
			grants[e.Key] = append(grants[e.Key], e)
		}
		from, ok := registered[idOf(e)]
		if !ok || !e.Waits {
			continue
		}
		end := e.At
		if e.Kind == Attempted && e.GiveUp > 0 {
			end = min(end, e.GiveUp)
		}
		if c, ok := crashed[idOf(e)]; ok {
			end = min(end, c)
		}
		waiters = append(waiters, waiter{Event: e, from: from, end: end})
	}
	var vs []Violation
	for _, w := range waiters {
		for _, g := range grants[w.Key] {
			if idOf(g) == idOf(w.Event) || g.Call <= w.from || g.At >= w.end {
				continue
			}
			vs = append(vs, Violation{Invariant: FairOrder, Key: g.Key, Lock: g.Lock, Client: g.Client, At: g.At,
				Detail: fmt.Sprintf("lock %d (client %d), called at %v, was granted at %v, before the waiter of client %d registered at %v (called at %v) was served, gave up or crashed (%v)",
					g.Lock, g.Client, g.Call, g.At, w.Client, w.from, w.Call, w.end)})
		}
	}
	slices.SortStableFunc(vs, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
	return vs
}
