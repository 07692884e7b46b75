package sim

import (
	"cmp"
	"slices"
	"strings"
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
	if len(s.Faults) == 0 {
		vs = append(vs, checker.OutOfOrder(events)...)
		vs = append(vs, checker.Starvation(events, c.Intervals, r.IsFair, starvationBound(s))...)
	}
	vs = append(vs, r.Extra()...)
	slices.SortStableFunc(vs, func(a, b checker.Violation) int { return cmp.Compare(a.At, b.At) })
	res.Violations = vs
	res.Second, res.Agree = secondOpinion(events, c)
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

// ops converts a history to the second checker's input: one Acquire per
// acquire call (granted, refused or possibly applied) and one Release per
// release, with the validity end the first checker used (c's intervals).
// It is the chaos suite's conversion (chaos/scenario/second.go), which is
// not exported.
func ops(events []checker.Event, c checker.Result) []linearize.Op {
	end := make(map[int64]checker.Interval, len(c.Intervals))
	for _, iv := range c.Intervals {
		end[iv.Lock] = iv
	}
	var out []linearize.Op
	for _, e := range events {
		mode := linearize.Exclusive
		if e.Shared {
			mode = linearize.Shared
		}
		op := linearize.Op{Lock: e.Lock, Client: e.Client, Key: e.Key, Mode: mode, Owner: e.Owner, Token: e.Token}
		switch e.Kind {
		case checker.Granted:
			op.Kind, op.Outcome, op.Call, op.Return = linearize.Acquire, linearize.Ok, e.Call, e.At
			op.Until = end[e.Lock].End
			if op.Until < op.Return {
				op.Until = op.Return
			}
		case checker.Attempted:
			op.Kind, op.Call, op.Return = linearize.Acquire, e.Call, e.At
			op.Outcome = linearize.Refused
			if e.Outcome == checker.Unknown {
				op.Outcome = linearize.Unknown
			}
		case checker.Released:
			iv, ok := end[e.Lock]
			if !ok {
				continue
			}
			op.Kind, op.Outcome, op.Call, op.Return = linearize.Release, linearize.Ok, e.At, e.At
			op.Client, op.Key, op.Mode, op.Owner = iv.Client, iv.Key, linearize.Exclusive, iv.Owner
			if iv.Shared {
				op.Mode = linearize.Shared
			}
		default:
			continue
		}
		out = append(out, op)
	}
	return out
}

// secondOpinion runs porcupine on the history and reports its verdict and
// whether it agrees with the first checker: the same keys illegal as the
// keys with overlaps, and no time-out.
func secondOpinion(events []checker.Event, c checker.Result) (string, bool) {
	res, err := linearize.Check(ops(events, c), linearize.Options{Timeout: 5 * time.Second})
	if err != nil {
		return "error: " + err.Error(), false
	}
	var keys []string
	for _, o := range c.Overlaps {
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	illegal := res.IllegalKeys()
	verdict := res.Verdict.String()
	if len(illegal) > 0 {
		verdict += " (keys " + strings.Join(illegal, ", ") + ")"
	}
	return verdict, res.Verdict != linearize.TimedOut && slices.Equal(illegal, keys)
}
