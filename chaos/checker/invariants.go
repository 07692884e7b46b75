package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Invariant names one property a history must have.
type Invariant string

// The invariants Check verifies. Mutual exclusion is found as Overlaps; the
// others as Violations.
const (
	// MutualExclusion: no two incompatible holds of a key overlap (one
	// owner for reentrant holds, one writer and no reader beside it).
	MutualExclusion Invariant = "mutual-exclusion"
	// UntilWithinExpiry: a holder's Until is never later than the time by
	// which fewer than a quorum of the masters still hold its key.
	UntilWithinExpiry Invariant = "until-within-expiry"
	// NoKeyLeft: once a call returned and its releases had time to land, a
	// quorum of the masters no longer holds what it wrote.
	NoKeyLeft Invariant = "no-key-left"
	// FenceIncreases: the fencing tokens of a key's exclusive holds
	// increase strictly from one owner to the next.
	FenceIncreases Invariant = "fence-increases"
	// NothingLeft: once a call returned and its releases returned, no
	// master on which none of them failed still holds anything the call
	// wrote (a minority included): its lock key, wait mark, fair
	// registration, permit, multi-key set or reentrant hold. Tombstones
	// ("...:tomb:...") are left by design, and must carry a TTL.
	NothingLeft Invariant = "nothing-left"
	// NoReaderBesideWriter: no master ever holds a live reader of a
	// read-write lock beside its writer (a read hold's Extend landing
	// after the reader expired must not re-admit it).
	NoReaderBesideWriter Invariant = "no-reader-beside-writer"
	// RepliesInStep: every call gets its own reply, also after an
	// application sent a command that changes the state of a shared
	// connection (which the library must refuse).
	RepliesInStep Invariant = "replies-in-step"
)

// Invariants lists every invariant that Check verifies, in report order.
var Invariants = []Invariant{MutualExclusion, UntilWithinExpiry, NoKeyLeft, FenceIncreases, AtMostPermits,
	NothingLeft, NoReaderBesideWriter, RenewalHolds, ContextWithinUntil, RepliesInStep}

// SampleTolerance is how far a holder's Until may pass the sampled expiry
// of its key before it counts as a violation. A sample reads PTTL (whole
// milliseconds, rounded down, counted from the master's own millisecond
// clock) and is dated when its reply arrived, which is never before the
// master ran it; the rounding adds at most 1ms, the rest is margin for the
// scheduling of the sampling goroutine.
const SampleTolerance = 2 * time.Millisecond

// Violation is one breach of an invariant other than an overlap.
type Violation struct {
	Invariant Invariant     `json:"invariant"`
	Key       string        `json:"key"`
	Lock      int64         `json:"lock,omitempty"`
	Client    int           `json:"client"`
	At        time.Duration `json:"at_ns"`
	Detail    string        `json:"detail"`
}

// String formats a violation for logs.
func (v Violation) String() string {
	return fmt.Sprintf("%s at %v, key %s, client %d: %s", v.Invariant, v.At, v.Key, v.Client, v.Detail)
}

// ByInvariant counts the overlaps and the violations of r per invariant;
// every invariant has an entry.
func (r Result) ByInvariant() map[Invariant]int {
	n := map[Invariant]int{}
	for _, inv := range Invariants {
		n[inv] = 0
	}
	n[MutualExclusion] = len(r.Overlaps)
	for _, v := range r.Violations {
		n[v.Invariant]++
	}
	return n
}

// Holds reports whether every invariant held: no overlap, no violation.
func (r Result) Holds() bool { return r.Safe() && len(r.Violations) == 0 }

// belief returns when a holder that was granted a lock valid until until
// stopped believing it held it, given the moves of its Until (Extended).
// An update that comes after the belief already ended does not revive it
// (the library refuses to extend a lock whose validity passed); one that
// lowers Until below its own time ends the belief then.
func belief(until time.Duration, ext []Event) time.Duration {
	slices.SortStableFunc(ext, func(a, b Event) int { return cmp.Compare(a.At, b.At) })
	for _, e := range ext {
		if e.At >= until {
			break
		}
		until = max(e.Until, e.At)
	}
	return until
}

// violations checks the invariants other than mutual exclusion.
func violations(events []Event, byLock map[int64]*Interval, intervals []Interval) []Violation {
	var vs []Violation
	for _, e := range events {
		switch e.Kind {
		case Sampled:
			iv := byLock[e.Lock]
			if iv == nil || e.Expire+SampleTolerance >= e.Until {
				continue
			}
			vs = append(vs, Violation{Invariant: UntilWithinExpiry, Key: iv.Key, Lock: e.Lock, Client: iv.Client, At: e.At,
				Detail: fmt.Sprintf("lock %d believed valid until %v, but fewer than a quorum of the masters hold its key from %v (%v early)",
					e.Lock, e.Until, e.Expire, e.Until-e.Expire)})
		case Leftover:
			vs = append(vs, Violation{Invariant: NoKeyLeft, Key: e.Key, Client: e.Client, At: e.At, Detail: e.Detail})
		case Remained:
			vs = append(vs, Violation{Invariant: NothingLeft, Key: e.Key, Client: e.Client, At: e.At, Detail: e.Detail})
		case Coexisted:
			vs = append(vs, Violation{Invariant: NoReaderBesideWriter, Key: e.Key, Client: e.Client, At: e.At, Detail: e.Detail})
		case OutOfStep:
			vs = append(vs, Violation{Invariant: RepliesInStep, Key: e.Key, Client: e.Client, At: e.At, Detail: e.Detail})
		}
	}
	vs = append(vs, fences(intervals)...)
	vs = append(vs, permits(intervals)...)
	vs = append(vs, lifetimes(events)...)
	slices.SortStableFunc(vs, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
	return vs
}

// fences checks that the tokens of each key's exclusive holds, in the
// order they were granted, increase strictly from one owner to the next
// (nested holds of one reentrant owner may repeat a token). Read holds and
// holds without a token (0) are skipped. intervals are ordered by key and
// start.
func fences(intervals []Interval) []Violation {
	var (
		vs   []Violation
		last Interval // the hold with the highest token so far on the key
	)
	for i, iv := range intervals {
		if i == 0 || intervals[i-1].Key != iv.Key {
			last = Interval{}
		}
		if iv.Shared || iv.Token == 0 {
			continue
		}
		sameOwner := iv.Owner != "" && iv.Owner == last.Owner
		if last.Token != 0 && (iv.Token < last.Token || (iv.Token == last.Token && !sameOwner)) {
			vs = append(vs, Violation{Invariant: FenceIncreases, Key: iv.Key, Lock: iv.Lock, Client: iv.Client, At: iv.Start,
				Detail: fmt.Sprintf("lock %d got token %d after lock %d (client %d) got %d", iv.Lock, iv.Token, last.Lock, last.Client, last.Token)})
		}
		if iv.Token >= last.Token {
			last = iv
		}
	}
	return vs
}
