package linearize

import (
	"slices"
	"strings"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

// FromHistory converts a history recorded for the interval checker
// (package checker) to this checker's input: one Acquire per acquire call
// (granted, refused or possibly applied) and one Release per release, with
// the validity end the interval checker used (c's intervals). A release of
// no interval (an orphan, which the interval checker counts) is left out.
// The chaos suite and the simulator both judge their histories through it.
func FromHistory(events []checker.Event, c checker.Result) []Op {
	end := make(map[int64]checker.Interval, len(c.Intervals))
	for _, iv := range c.Intervals {
		end[iv.Lock] = iv
	}
	var out []Op
	for _, e := range events {
		mode := Exclusive
		if e.Shared {
			mode = Shared
		}
		op := Op{Lock: e.Lock, Client: e.Client, Key: e.Key, Mode: mode, Owner: e.Owner, Token: e.Token}
		switch e.Kind {
		case checker.Granted:
			op.Kind, op.Outcome, op.Call, op.Return = Acquire, Ok, e.Call, e.At
			op.Until = max(end[e.Lock].End, op.Return)
		case checker.Attempted:
			op.Kind, op.Call, op.Return = Acquire, e.Call, e.At
			op.Outcome = Refused
			if e.Outcome == checker.Unknown {
				op.Outcome = Unknown
			}
		case checker.Released:
			iv, ok := end[e.Lock]
			if !ok {
				continue
			}
			op.Kind, op.Outcome, op.Call, op.Return = Release, Ok, e.At, e.At
			op.Client, op.Key, op.Mode, op.Owner = iv.Client, iv.Key, Exclusive, iv.Owner
			if iv.Shared {
				op.Mode = Shared
			}
		default:
			continue
		}
		out = append(out, op)
	}
	return out
}

// SecondOpinion checks the history with this checker (FromHistory, then
// Check with o) and reports its verdict, with the illegal keys named, and
// whether it agrees with the interval checker's result c: the same keys
// illegal as the keys with overlaps, and no time-out.
func SecondOpinion(events []checker.Event, c checker.Result, o Options) (verdict string, agree bool, err error) {
	res, err := Check(FromHistory(events, c), o)
	if err != nil {
		return "", false, err
	}
	var keys []string
	for _, ov := range c.Overlaps {
		keys = append(keys, ov.Key)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	illegal := res.IllegalKeys()
	verdict = res.Verdict.String()
	if len(illegal) > 0 {
		verdict += " (keys " + strings.Join(illegal, ", ") + ")"
	}
	return verdict, res.Verdict != TimedOut && slices.Equal(illegal, keys), nil
}
