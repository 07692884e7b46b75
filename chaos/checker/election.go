package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// The invariants of a leader election (redlock.Election), judged from
// what its candidates and observers recorded (ElectionHistory). Its
// leaderships are also holds of the History (a Granted per term, its
// fencing token the term, Released when the leader resigned or crashed,
// Extended at every renewal, its Context watched), so that Check judges
// them as it judges locks: mutual-exclusion (two leaders at once),
// renewal-holds and context-within-until (a leadership's Context must end
// by the Until its renewals left).
const (
	// OneLeaderPerTerm: no two leaderships have the same term, and every
	// leadership has one (a candidate whose Campaign returned reports a
	// term > 0 while it still leads).
	OneLeaderPerTerm Invariant = "one-leader-per-term"
	// TermsIncrease: the terms of successive leaderships, in the order
	// their Campaigns returned, increase strictly.
	TermsIncrease Invariant = "terms-increase"
	// FencedActions: no action a leader took while it led (before its
	// leadership's end as Check judges it: its Resign, its crash, or the
	// Until its renewals left) was refused by the fenced resource: a
	// refusal means a later term had acted first, while this one still
	// led.
	FencedActions Invariant = "fenced-actions"
	// LeaderReadCurrent: a Leader read (a quorum read) invoked at i that
	// answers term T is not stale: no leadership of a term above T had
	// returned from Campaign before i, and T's own leader had not
	// returned from a successful Resign before i (a quorum of the masters
	// then no longer held T, and quorums intersect).
	LeaderReadCurrent Invariant = "leader-read-current"
	// ObserveOrder: each observer gets leaders in term order, each once:
	// every delivery has a higher term than the one before it, or the
	// same term with another value (a Proclaim) that is not an older one
	// of that leader's (proclaimed before the one delivered before it).
	ObserveOrder Invariant = "observe-order"
	// ObserveTrue: every leader delivered (or read) is one that a
	// candidate made: its value is a campaign's or a Proclaim's, and when
	// that campaign's term is known, the term is that.
	ObserveTrue Invariant = "observe-true"
	// ObserveCoverage: an observer skips no leader, nor a value one
	// proclaimed, that held for longer than the observation bound: see
	// Coverage.
	ObserveCoverage Invariant = "observe-coverage"
	// LeaderReplaced: once a leader resigned or crashed, with a majority
	// of the masters up and other candidates campaigning, a new leader's
	// Campaign returned within the handover's bound (Handover).
	LeaderReplaced Invariant = "leader-replaced"
)

// ElectionInvariants lists the invariants CheckElection verifies.
var ElectionInvariants = []Invariant{OneLeaderPerTerm, TermsIncrease, FencedActions, LeaderReadCurrent,
	ObserveOrder, ObserveTrue, ObserveCoverage, LeaderReplaced}

// Leadership is one leadership of an election, as its candidate saw it.
type Leadership struct {
	// Lock is its hold in the History (0: not recorded there).
	Lock   int64
	Client int
	// Term is what the candidate's Election.Term reported once Campaign
	// returned; 0 when it reported none while it still led (a violation),
	// -1 when the leadership was lost before it could be asked.
	Term int64
	// Call and Start are when Campaign was invoked and returned; End is
	// when the candidate stopped leading: Resign invoked, a crash, its
	// Context's end, or the end of the run.
	Call, Start, End time.Duration
	// Versions are the values it led with, in order: the campaign's from
	// Start, then each Proclaim's from when Proclaim returned.
	Versions []Version
	// Resigned, when > 0, is when a Resign that returned nil returned.
	Resigned time.Duration
	// How it ended: "resign", "crash", "lost" or "end".
	How string
}

// Version is a value a leader led with, from From on (when Campaign or
// Proclaim returned); Called is when its Proclaim was invoked (the
// version before it is current until then).
type Version struct {
	Value        string
	Called, From time.Duration
}

// Read is a Leader read that answered a leader.
type Read struct {
	Client   int
	Call, At time.Duration
	Term     int64
	Value    string
}

// Delivery is a leader an observer got from Observe, at At.
type Delivery struct {
	At    time.Duration
	Term  int64
	Value string
}

// Watch is one observer's Observe, from From (called) to To (stopped).
type Watch struct {
	Client   int
	From, To time.Duration
	Got      []Delivery
}

// Action is one action a leader took on the fenced resource, with its
// term, at At, and whether the resource accepted it.
type Action struct {
	Client   int
	Lock     int64 // the leadership's hold in the History
	Term     int64
	At       time.Duration
	Accepted bool
}

// Handover is a leader's end (a Resign or a crash) at At while other
// candidates campaigned and a majority of the masters was up: a new
// leader must return from Campaign within Bound.
type Handover struct {
	Client int
	Term   int64
	How    string
	At     time.Duration
	Bound  time.Duration
}

// ElectionHistory is what an election's candidates and observers
// recorded.
type ElectionHistory struct {
	Key       string
	Leaders   []Leadership
	Reads     []Read
	Watches   []Watch
	Actions   []Action
	Handovers []Handover
	// Campaigned maps every value a campaign or a Proclaim used (values
	// are unique) to the term it led in: 0 when unknown (its Campaign
	// failed, but may have written the value).
	Campaigned map[string]int64
}

// Coverage says over which spans ObserveCoverage is judged, and with
// which bound.
//
// A leader version (a term, and a value its leader campaigned with or
// proclaimed) is current from when Campaign (or Proclaim) returned until
// the next Proclaim was invoked (Version.Called) or the leadership ended
// (Leadership.End).
// An observer must get it if, while its Observe ran (Watch.From..To) and
// within one of Spans, the version was current for a whole Window:
// Observe reads the leader from a quorum at least every observePoll
// (min(ttl/4, 1s)) after its previous read ended, and a read takes at
// most the node timeout; so Window = 2 x observePoll + node timeout holds
// a whole read that began after the version was current. A read that
// meets a version counts only while a quorum of the masters answers the
// observer: Spans are the times when at most a minority of the masters
// was faulty and no fault was in force between the observer and the
// others (the scenario's quiet phase).
type Coverage struct {
	Window time.Duration
	Spans  [][2]time.Duration
}

// CheckElection verifies the election invariants on h. intervals are
// Check's (the leaderships' holds among them), for FencedActions.
func CheckElection(h ElectionHistory, cov Coverage, intervals []Interval) []Violation {
	var vs []Violation
	add := func(inv Invariant, client int, at time.Duration, format string, args ...any) {
		vs = append(vs, Violation{Invariant: inv, Key: h.Key, Client: client, At: at, Detail: fmt.Sprintf(format, args...)})
	}
	leaders := slices.Clone(h.Leaders)
	slices.SortStableFunc(leaders, func(a, b Leadership) int { return cmp.Compare(a.Start, b.Start) })

	// One leader per term; terms increase.
	byTerm := map[int64]Leadership{}
	var last *Leadership
	for i := range leaders {
		l := &leaders[i]
		switch {
		case l.Term == 0:
			add(OneLeaderPerTerm, l.Client, l.Start, "client %d returned from Campaign at %v and leads with no term", l.Client, l.Start)
			continue
		case l.Term < 0:
			continue
		}
		if o, ok := byTerm[l.Term]; ok {
			add(OneLeaderPerTerm, l.Client, l.Start, "term %d led by client %d (from %v) and by client %d (from %v)", l.Term, o.Client, o.Start, l.Client, l.Start)
		} else {
			byTerm[l.Term] = *l
		}
		if last != nil && l.Term <= last.Term {
			add(TermsIncrease, l.Client, l.Start, "client %d leads in term %d from %v, after client %d led in term %d from %v",
				l.Client, l.Term, l.Start, last.Client, last.Term, last.Start)
		}
		if last == nil || l.Term > last.Term {
			last = l
		}
	}

	// Fenced actions.
	end := map[int64]time.Duration{}
	for _, iv := range intervals {
		end[iv.Lock] = iv.End
	}
	for _, a := range h.Actions {
		if e, ok := end[a.Lock]; ok && !a.Accepted && a.At < e {
			add(FencedActions, a.Client, a.At, "an action of term %d at %v refused by the resource (a higher term had acted) while its leader led (until %v)", a.Term, a.At, e)
		}
	}

	// Leader reads: current, and true.
	for _, r := range h.Reads {
		for _, l := range leaders {
			switch {
			case l.Term > r.Term && l.Start < r.Call:
				add(LeaderReadCurrent, r.Client, r.At, "a Leader read invoked at %v answered term %d, but term %d (client %d) had returned from Campaign at %v", r.Call, r.Term, l.Term, l.Client, l.Start)
			case l.Term == r.Term && l.Resigned > 0 && l.Resigned < r.Call:
				add(LeaderReadCurrent, r.Client, r.At, "a Leader read invoked at %v answered term %d, whose leader (client %d) had resigned at %v", r.Call, r.Term, l.Client, l.Resigned)
			default:
				continue
			}
			break
		}
		if d := untrue(h.Campaigned, r.Term, r.Value); d != "" {
			add(ObserveTrue, r.Client, r.At, "a Leader read at %v: %s", r.At, d)
		}
	}

	// Observers: order, truth, coverage. A value's place among its
	// leader's versions (the campaign's, then each Proclaim's that
	// returned, in order) orders the values of one term.
	place := map[string]int{}
	for _, l := range leaders {
		for i, v := range l.Versions {
			place[v.Value] = i
		}
	}
	older := func(d, prev *Delivery) bool {
		pd, ok1 := place[d.Value]
		pp, ok2 := place[prev.Value]
		return ok1 && ok2 && pd < pp
	}
	for _, w := range h.Watches {
		var prev *Delivery
		for i := range w.Got {
			d := &w.Got[i]
			if prev != nil && !(d.Term > prev.Term || d.Term == prev.Term && d.Value != prev.Value && !older(d, prev)) {
				add(ObserveOrder, w.Client, d.At, "observer %d got term %d (%q) at %v after term %d (%q) at %v", w.Client, d.Term, d.Value, d.At, prev.Term, prev.Value, prev.At)
			}
			prev = d
			if s := untrue(h.Campaigned, d.Term, d.Value); s != "" {
				add(ObserveTrue, w.Client, d.At, "observer %d at %v: %s", w.Client, d.At, s)
			}
		}
		for _, l := range leaders {
			if l.Term <= 0 {
				continue
			}
			for i, v := range l.Versions {
				to := l.End
				if i+1 < len(l.Versions) {
					to = min(to, l.Versions[i+1].Called)
				}
				from := max(v.From, w.From)
				to = min(to, w.To)
				if !coveredFor(cov, from, to) {
					continue
				}
				got := slices.ContainsFunc(w.Got, func(d Delivery) bool { return d.Term == l.Term && d.Value == v.Value })
				if !got {
					what := "its term"
					if i > 0 {
						what = "a value it proclaimed"
					}
					if !slices.ContainsFunc(w.Got, func(d Delivery) bool { return d.Term == l.Term }) {
						what = "its term at all"
					}
					add(ObserveCoverage, w.Client, from, "observer %d (from %v to %v) never got term %d with %q (client %d), current from %v to %v, over %v in a quiet span: it missed %s",
						w.Client, w.From, w.To, l.Term, v.Value, l.Client, max(v.From, w.From), to, cov.Window, what)
				}
			}
		}
	}

	// Replacement.
	for _, ho := range h.Handovers {
		i := slices.IndexFunc(leaders, func(l Leadership) bool { return l.Start > ho.At })
		switch {
		case i < 0:
			add(LeaderReplaced, ho.Client, ho.At, "after client %d's %s of term %d at %v, no new leader (bound %v)", ho.Client, ho.How, ho.Term, ho.At, ho.Bound)
		case leaders[i].Start-ho.At > ho.Bound:
			add(LeaderReplaced, ho.Client, ho.At, "after client %d's %s of term %d at %v, the next leader (client %d, term %d) came %v later, past the bound %v",
				ho.Client, ho.How, ho.Term, ho.At, leaders[i].Client, leaders[i].Term, leaders[i].Start-ho.At, ho.Bound)
		}
	}
	slices.SortStableFunc(vs, func(a, b Violation) int { return cmp.Compare(a.At, b.At) })
	return vs
}

// untrue says what is wrong with a leader (term, value) that a read or
// an observer got, or "" when it is one that a candidate made.
func untrue(campaigned map[string]int64, term int64, value string) string {
	t, ok := campaigned[value]
	switch {
	case !ok:
		return fmt.Sprintf("term %d with %q, a value no candidate campaigned with or proclaimed", term, value)
	case t > 0 && t != term:
		return fmt.Sprintf("term %d with %q, the value of term %d", term, value, t)
	}
	return ""
}

// coveredFor reports whether [from, to) holds a whole Window within one
// of the spans.
func coveredFor(cov Coverage, from, to time.Duration) bool {
	if cov.Window <= 0 {
		return false
	}
	for _, s := range cov.Spans {
		if min(to, s[1])-max(from, s[0]) >= cov.Window {
			return true
		}
	}
	return false
}
