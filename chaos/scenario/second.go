package scenario

import (
	"slices"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/linearize"
)

// ops converts a history to the second checker's input: one Acquire per
// acquire call (granted, refused or possibly applied) and one Release per
// release, with the validity end the first checker used (c's intervals).
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
				continue // an orphan: the first checker counts it
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

// secondOpinion runs the second checker on the history and reports its
// verdict and whether it agrees with the first: the same keys illegal as
// the keys with overlaps, and no time-out.
func secondOpinion(events []checker.Event, c checker.Result) (verdict string, agree bool, err error) {
	res, err := linearize.Check(ops(events, c), linearize.Options{})
	if err != nil {
		return "", false, err
	}
	var keys []string
	for _, o := range c.Overlaps {
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	illegal := res.IllegalKeys()
	verdict = res.Verdict.String()
	if len(illegal) > 0 {
		verdict += " (keys " + joinKeys(illegal) + ")"
	}
	return verdict, res.Verdict != linearize.TimedOut && slices.Equal(illegal, keys), nil
}

func joinKeys(ks []string) string {
	s := ""
	for i, k := range ks {
		if i > 0 {
			s += ", "
		}
		s += k
	}
	return s
}
