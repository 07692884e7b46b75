package checker

import (
	"cmp"
	"container/heap"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Kind is the kind of an Event.
type Kind int

const (
	// Granted: a lock was granted at At; it is valid until Until.
	Granted Kind = iota + 1
	// Released: the holder began to release the lock at At (it stopped
	// using the resource then, whatever the release's outcome).
	Released
	// Attempted: an acquire called at Call returned at At without the
	// lock; Outcome says whether it was refused or may have been applied.
	Attempted
	// Extended: the holder's Until became Until at At (an Extend, a
	// renewal, or a failed Extend that lowered it).
	Extended
	// Sampled: at At the masters were read directly; the key of Lock is
	// held by fewer than a quorum of them from Expire on, while the
	// holder believed itself valid until Until (see until.go).
	Sampled
	// Leftover: a call of Client on Key returned at At, and a quorum of
	// the masters still held what it wrote once its releases had time
	// to land (see Detail).
	Leftover
	// Registered: the fair waiter of the acquire call that Client
	// invoked at Call on Key was seen registered on a quorum of the
	// masters at At (see FairOrder).
	Registered
	// Crashed: the acquire call that Client invoked at Call on Key was
	// abandoned at At as a crashed process abandons it: nothing of it
	// reaches the masters any more, nothing of it is cleaned up.
	Crashed
	// Lost: lock Lock ended at At other than by its release: its holder
	// was told that it can no longer be guaranteed (Lock.Done).
	Lost
	// RenewFailed: a renewal of lock Lock failed at At; Obstructed says
	// whether for want of answers (a master failed or answered late),
	// rather than refused by the masters.
	RenewFailed
	// CtxLive: the context of lock Lock (Lock.Context, or the one
	// Locker.Do gives its function) was still live at At.
	CtxLive
	// Coexisted: at At a master held a live reader of Key beside its
	// writer (see Detail).
	Coexisted
	// Remained: a call of Client on Key returned at At, its releases
	// returned, and a master on which no release failed still held what
	// the call wrote (see Detail).
	Remained
	// OutOfStep: at At a call of Client got a reply that was not its own
	// (see Detail): its connection's replies were out of step with its
	// commands.
	OutOfStep
)

// Outcome is how an Attempted acquire ended.
type Outcome int

const (
	// Refused: the masters answered, and not enough of them granted.
	Refused Outcome = iota + 1
	// Unknown: the call timed out or failed with a transport error; it
	// may have been applied on some masters.
	Unknown
)

// Event is one record of the history of a lock.
type Event struct {
	Kind Kind
	// Lock identifies the acquisition; it links a Released to its Granted.
	Lock int64
	// Client and Key of the acquisition; Token is its fencing token.
	// Needed on Granted only.
	Client int
	Key    string
	Token  int64
	// At is the offset of the event from the history's base time.
	At time.Duration
	// Until is the end of the lock's guaranteed validity (Granted,
	// Extended, Sampled).
	Until time.Duration
	// Call is when the acquire was invoked (Granted, Attempted).
	Call time.Duration
	// Owner is the reentrant owner of a hold: holds of one owner may
	// overlap. Shared marks a read hold: read holds may overlap each other.
	Owner  string
	Shared bool
	// Permits > 0 marks a hold of one of the Permits permits of a
	// semaphore, recorded Shared too (its holds may overlap each other):
	// at most Permits of them may overlap (AtMostPermits).
	Permits int
	// Outcome of an Attempted acquire.
	Outcome Outcome
	// Expire is the sampled end of the quorum's hold (Sampled).
	Expire time.Duration
	// Detail describes a Leftover, a Coexisted, a Remained or a
	// RenewFailed.
	Detail string
	// Waits marks an acquire call that waits for its turn (Lock, not
	// TryLock); GiveUp is when its context ends (0: never). Granted and
	// Attempted only; FairOrder uses them.
	Waits  bool
	GiveUp time.Duration
	// Renewed marks a hold kept by its renewal (Config.AutoRenew, or
	// Locker.Do) whose TTL is TTL (Granted only): RenewalHolds applies
	// to it.
	Renewed bool
	TTL     time.Duration
	// Obstructed: the RenewFailed renewal failed for want of answers.
	Obstructed bool
}

// Interval is the time during which one acquisition held its key.
type Interval struct {
	Lock   int64  `json:"lock"`
	Client int    `json:"client"`
	Key    string `json:"key"`
	Token  int64  `json:"token"`
	// Owner and Shared are the Event's: holds of one owner, or two read
	// holds, are compatible and never overlap each other.
	Owner  string `json:"owner,omitempty"`
	Shared bool   `json:"shared,omitempty"`
	// Permits is the Event's: the number of holds that may overlap.
	Permits int `json:"permits,omitempty"`
	// Start and End bound the interval [Start, End).
	Start time.Duration `json:"start_ns"`
	End   time.Duration `json:"end_ns"`
	// Released is true when End is the release, false when it is Until.
	Released bool `json:"released"`
}

// Overlap is a pair of intervals of one key that overlap, A starting no
// later than B.
type Overlap struct {
	Key string   `json:"key"`
	A   Interval `json:"a"`
	B   Interval `json:"b"`
}

// From and To bound the time both held the key.
func (o Overlap) From() time.Duration { return max(o.A.Start, o.B.Start) }

// To is the end of the time both held the key.
func (o Overlap) To() time.Duration { return min(o.A.End, o.B.End) }

// Result is the verdict on a history.
type Result struct {
	// Intervals holds one interval per granted lock, ordered by key, then
	// start, then lock id.
	Intervals []Interval
	// Overlaps holds every overlapping pair, ordered by key, then B's start.
	Overlaps []Overlap
	// Orphans counts Released events without a Granted one: a bug in the
	// recording, reported rather than hidden.
	Orphans int
	// Violations of the other invariants (Until within the masters'
	// expiry, no key left, fences increase), ordered by time.
	Violations []Violation
}

// Safe reports whether mutual exclusion held.
func (r Result) Safe() bool { return len(r.Overlaps) == 0 }

// compatible reports whether two holds of one key may overlap: two read
// holds, or two holds of the same reentrant owner.
func compatible(a, b Interval) bool {
	return (a.Shared && b.Shared) || (a.Owner != "" && a.Owner == b.Owner)
}

// Check builds the intervals of events, given in any order, and finds every
// pair of incompatible intervals of the same key that overlap. A lock
// released more than once ends at its first release; a lock whose Until
// moved (Extended) ends when the holder's belief ended (see belief). It
// also checks the other invariants (Violations). It runs in
// O(n log n + overlaps).
func Check(events []Event) Result {
	var res Result
	byLock := map[int64]*Interval{}
	released := map[int64]time.Duration{}
	extended := map[int64][]Event{}
	for _, e := range events {
		switch e.Kind {
		case Granted:
			byLock[e.Lock] = &Interval{Lock: e.Lock, Client: e.Client, Key: e.Key, Token: e.Token,
				Owner: e.Owner, Shared: e.Shared, Permits: e.Permits, Start: e.At, End: e.Until}
		case Released:
			if r, ok := released[e.Lock]; !ok || e.At < r {
				released[e.Lock] = e.At
			}
		case Extended:
			extended[e.Lock] = append(extended[e.Lock], e)
		}
	}
	for id, ext := range extended {
		if iv, ok := byLock[id]; ok {
			iv.End = belief(iv.End, ext)
		}
	}
	for id, at := range released {
		iv, ok := byLock[id]
		if !ok {
			res.Orphans++
			continue
		}
		if at < iv.End {
			iv.End, iv.Released = at, true
		}
	}
	res.Intervals = make([]Interval, 0, len(byLock))
	for _, iv := range byLock {
		if iv.End < iv.Start { // released (or expired) before it was granted
			iv.End = iv.Start
		}
		res.Intervals = append(res.Intervals, *iv)
	}
	slices.SortFunc(res.Intervals, func(a, b Interval) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Start, b.Start), cmp.Compare(a.Lock, b.Lock))
	})
	// Sweep each key's intervals by start, keeping the ones still open in a
	// min-heap by end: every open interval overlaps the one that starts.
	var open endHeap
	for i, iv := range res.Intervals {
		if i == 0 || res.Intervals[i-1].Key != iv.Key {
			open = open[:0]
		}
		if iv.End <= iv.Start {
			continue // empty: overlaps nothing
		}
		for len(open) > 0 && open[0].End <= iv.Start {
			heap.Pop(&open)
		}
		for _, a := range open {
			if !compatible(a, iv) {
				res.Overlaps = append(res.Overlaps, Overlap{Key: iv.Key, A: a, B: iv})
			}
		}
		heap.Push(&open, iv)
	}
	slices.SortStableFunc(res.Overlaps, func(a, b Overlap) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.B.Start, b.B.Start),
			cmp.Compare(a.A.Start, b.A.Start), cmp.Compare(a.A.Lock, b.A.Lock))
	})
	res.Violations = violations(events, byLock, res.Intervals)
	return res
}

type endHeap []Interval

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].End < h[j].End }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(Interval)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// History records events on one monotonic timeline. It is safe for
// concurrent use.
type History struct {
	base time.Time

	mu     sync.Mutex
	events []Event
	next   int64
}

// NewHistory returns an empty history whose offsets count from base. Times
// passed to it must carry a monotonic clock reading (time.Now's do), so that
// a wall-clock step cannot bend the timeline.
func NewHistory(base time.Time) *History { return &History{base: base} }

// Base is the time offsets count from.
func (h *History) Base() time.Time { return h.base }

// Offset converts t to an offset on the history's timeline.
func (h *History) Offset(t time.Time) time.Duration { return t.Sub(h.base) }

// Grant records a lock granted at t, valid until until, and returns its id
// for Release.
func (h *History) Grant(client int, key string, token int64, t, until time.Time) int64 {
	return h.GrantCall(Event{Client: client, Key: key, Token: token}, t, t, until)
}

// GrantCall records the acquire described by e (Client, Key, Token, Owner,
// Shared), invoked at call and granted at t, valid until until, and returns
// its id for Release.
func (h *History) GrantCall(e Event, call, t, until time.Time) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	e.Kind, e.Lock = Granted, h.next
	e.Call, e.At, e.Until = h.Offset(call), h.Offset(t), h.Offset(until)
	h.events = append(h.events, e)
	return h.next
}

// Attempt records an acquire described by e (Client, Key, Owner, Shared)
// invoked at call that returned at t without the lock, with outcome o.
func (h *History) Attempt(e Event, call, t time.Time, o Outcome) {
	e.Kind, e.Outcome = Attempted, o
	e.Call, e.At = h.Offset(call), h.Offset(t)
	h.add(e)
}

// Extend records that the Until of lock became until at t.
func (h *History) Extend(lock int64, t, until time.Time) {
	h.add(Event{Kind: Extended, Lock: lock, At: h.Offset(t), Until: h.Offset(until)})
}

// Sample records that at t the key of lock, read on the masters, is held
// by fewer than a quorum from expire on, while its holder believed it
// valid until until.
func (h *History) Sample(lock int64, t, until, expire time.Time) {
	h.add(Event{Kind: Sampled, Lock: lock, At: h.Offset(t), Until: h.Offset(until), Expire: h.Offset(expire)})
}

// Left records that a call of client on key, returned at t, left a quorum
// holding what detail describes.
func (h *History) Left(client int, key string, t time.Time, detail string) {
	h.add(Event{Kind: Leftover, Client: client, Key: key, At: h.Offset(t), Detail: detail})
}

func (h *History) add(e Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

// Release records that the holder of lock began to release it at t.
func (h *History) Release(lock int64, t time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, Event{Kind: Released, Lock: lock, At: h.Offset(t)})
}

// Events returns a copy of the events recorded so far.
func (h *History) Events() []Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.events)
}

// Grants is the number of locks granted so far.
func (h *History) Grants() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return int(h.next)
}

// String formats an interval for logs.
func (iv Interval) String() string {
	end := "until"
	if iv.Released {
		end = "released"
	}
	return fmt.Sprintf("lock %d (client %d, key %s, token %d) [%v, %v %s)", iv.Lock, iv.Client, iv.Key, iv.Token, iv.Start, iv.End, end)
}
