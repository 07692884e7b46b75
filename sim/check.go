package sim

import (
	"cmp"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/linearize"
	"github.com/quorumlock/quorumlock/sim/schedule"
	"github.com/quorumlock/quorumlock/sim/workload"
)

// judge checks the history of a run with the chaos suite's checkers: the
// interval checker with every invariant it knows (checker.Check), fair
// order and starvation on fair locks (checker.OutOfOrder,
// checker.Starvation), and porcupine (linearize.Check), which must find
// illegal exactly the keys with overlaps. Fair order and starvation are
// checked in runs without faults only: a waiter whose registration's
// refreshes do not land (its client paused, its links cut) may rightly be
// overtaken, and a fault may hold the waiters up for longer than any
// bound.
func judge(res *Result, s *schedule.Schedule, r *workload.Run, h *checker.History) {
	events := h.Events()
	c := checker.Check(events)
	res.Checked = c
	vs := slices.Clone(c.Violations)
	// A renewed lock that a master forgot (a power loss, a failover) may be
	// lost: the masters refuse its renewal rightly. renewal-holds is about
	// masters that kept their data.
	start := make(map[int64]time.Duration, len(c.Intervals))
	for _, iv := range c.Intervals {
		start[iv.Lock] = iv.Start
	}
	ttl := make(map[int64]time.Duration)
	for _, e := range events {
		if e.Kind == checker.Granted && e.Renewed {
			ttl[e.Lock] = e.TTL
		}
	}
	vs = slices.DeleteFunc(vs, func(v checker.Violation) bool {
		if v.Invariant != checker.RenewalHolds {
			return false
		}
		// A fault around the loss (on the holder's links or any master)
		// may have made a renewal answer late rather than fail: the
		// chaos suite's rule counts only failures. Judged where none was.
		loss := h.Base().Add(v.At)
		from, to := loss.Add(-2*ttl[v.Lock]), loss.Add(ttl[v.Lock]/2)
		return r.LossBetween(h.Base().Add(start[v.Lock]), loss) || len(r.W.Spans(v.Client, -1, from, to)) > 0
	})
	// Fair order is judged under faults too: a waiter's wait ends (for
	// the checker) when its registration lapsed on a quorum (the
	// workload's lapse). Starvation only without faults.
	vs = append(vs, checker.OutOfOrder(events)...)
	if len(s.Faults) == 0 {
		vs = append(vs, checker.Starvation(events, c.Intervals, r.IsFair, starvationBound(s))...)
	}
	vs = append(vs, r.Extra()...)
	slices.SortStableFunc(vs, func(a, b checker.Violation) int { return cmp.Compare(a.At, b.At) })
	res.Violations = vs
	second, agree, err := linearize.SecondOpinion(events, c, linearize.Options{Timeout: 5 * time.Second})
	if err != nil {
		second, agree = "error: "+err.Error(), false
	}
	res.Second, res.Agree = second, agree
}

// starvationBound is the longest a fair lock may lie free while a waiter
// waits (workload.FairStarvationBound of the chaos suite): the longest
// TTL, a registration's life, the retry ceiling and three node timeouts.
func starvationBound(s *schedule.Schedule) time.Duration {
	nt := s.Lib.NodeTimeout.D()
	if nt == 0 {
		nt = 50 * time.Millisecond
	}
	var ttl time.Duration
	for _, ops := range s.Ops {
		for _, o := range ops {
			if o.Kind == schedule.Fair {
				ttl = max(ttl, o.TTL.D())
			}
		}
	}
	return ttl + max(6*nt, 300*time.Millisecond) + 256*time.Millisecond + 3*nt
}
