package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Two invariants follow a hold over its lifetime rather than against other
// holds: a renewed lock is not lost while its renewal gets through, and a
// lock's context ends no later than the lock's guarantee.

// RenewalHolds: a renewed hold (Config.AutoRenew, Locker.Do) is not lost
// while its holder holds it, unless one of its renewals failed for want of
// answers (a master or a link was faulty) from two TTLs before the loss to
// half a TTL after it (a renewal in flight when the lock ended fails
// after). A loss with no such failure is spurious: the renewal did not run,
// ran too late, or extended by too little, while the masters answered.
const RenewalHolds Invariant = "renewal-holds"

// ContextWithinUntil: the context of a lock (Lock.Context, or the one
// Locker.Do gives its function) ends no later than the lock's guarantee,
// its Until as every Extend and renewal moved it, unless its holder
// released the lock first. ContextTolerance allows for the scheduling of
// the library's timer and of the goroutine that notes the end.
const ContextWithinUntil Invariant = "context-within-until"

// ContextTolerance is how long a lock's context may stay live past the
// lock's Until before it counts as a violation: a timer that fires late and
// a goroutine scheduled late on a loaded machine, not a context that ends
// a TTL late or never.
const ContextTolerance = 50 * time.Millisecond

// life is what the history says of one hold over its lifetime.
type life struct {
	grant    Event
	ext      []Event
	released time.Duration // first release, or -1
	lost     time.Duration // first loss, or -1
	fails    []Event       // RenewFailed
	live     time.Duration // latest CtxLive, or -1
}

// lives collects the life of every granted hold of events.
func lives(events []Event) map[int64]*life {
	m := map[int64]*life{}
	get := func(id int64) *life {
		l := m[id]
		if l == nil {
			l = &life{released: -1, lost: -1, live: -1}
			m[id] = l
		}
		return l
	}
	first := func(d *time.Duration, at time.Duration) {
		if *d < 0 || at < *d {
			*d = at
		}
	}
	for _, e := range events {
		switch e.Kind {
		case Granted:
			get(e.Lock).grant = e
		case Extended:
			l := get(e.Lock)
			l.ext = append(l.ext, e)
		case Released:
			first(&get(e.Lock).released, e.At)
		case Lost:
			first(&get(e.Lock).lost, e.At)
		case RenewFailed:
			l := get(e.Lock)
			l.fails = append(l.fails, e)
		case CtxLive:
			l := get(e.Lock)
			l.live = max(l.live, e.At)
		}
	}
	for id, l := range m {
		if l.grant.Kind != Granted {
			delete(m, id) // an orphan: Check counts it
		}
	}
	return m
}

// lifetimes checks RenewalHolds and ContextWithinUntil, in lock order.
func lifetimes(events []Event) []Violation {
	m := lives(events)
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var vs []Violation
	for _, id := range ids {
		l := m[id]
		if v, ok := l.spuriousLoss(); ok {
			vs = append(vs, v)
		}
		if v, ok := l.lateContext(); ok {
			vs = append(vs, v)
		}
	}
	slices.SortStableFunc(vs, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
	return vs
}

// heldAt reports whether the holder had not released the lock by t.
func (l *life) heldAt(t time.Duration) bool { return l.released < 0 || t < l.released }

// spuriousLoss reports a renewed hold lost while held with no renewal
// failure for want of answers around the loss.
func (l *life) spuriousLoss() (Violation, bool) {
	g := l.grant
	if !g.Renewed || l.lost < 0 || !l.heldAt(l.lost) {
		return Violation{}, false
	}
	from, to := l.lost-2*g.TTL, l.lost+g.TTL/2
	refused := 0
	for _, f := range l.fails {
		if f.At < from || f.At > to {
			continue
		}
		if f.Obstructed {
			return Violation{}, false
		}
		refused++
	}
	return Violation{Invariant: RenewalHolds, Key: g.Key, Lock: g.Lock, Client: g.Client, At: l.lost,
		Detail: fmt.Sprintf("renewed lock %d (TTL %v) was lost at %v while held, and none of its renewals from %v to %v failed for want of answers (%d refused)",
			g.Lock, g.TTL, l.lost, from, to, refused)}, true
}

// lateContext reports a lock whose context was live past its guarantee
// (by more than ContextTolerance) while its holder still held it.
func (l *life) lateContext() (Violation, bool) {
	g := l.grant
	if l.live < 0 {
		return Violation{}, false
	}
	end := belief(g.Until, l.ext)
	if !l.heldAt(end) || l.live <= end+ContextTolerance {
		return Violation{}, false
	}
	return Violation{Invariant: ContextWithinUntil, Key: g.Key, Lock: g.Lock, Client: g.Client, At: end,
		Detail: fmt.Sprintf("the context of lock %d was still live at %v, %v after the lock's Until (%v)",
			g.Lock, l.live, l.live-end, end)}, true
}
