package linearize

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// DefaultTimeout bounds a Check whose Options give no Timeout.
const DefaultTimeout = 10 * time.Second

// Options tune Check. The zero value is ready to use.
type Options struct {
	// Timeout bounds the whole check; keys not decided in time are
	// TimedOut. Zero or less means DefaultTimeout.
	Timeout time.Duration
	// CallWindows gives every operation its recorded [Call, Return] window
	// (an open one for an Unknown outcome), instead of the point at which
	// the holder's knowledge changes. The verdict is the same (see the
	// package documentation); the search is larger.
	CallWindows bool
	// Visualize, if set, is a file path: porcupine's HTML visualization of
	// the first key (in key order) that is not Linearizable is written
	// there: of the segment of its history that decided it.
	Visualize string
}

// Verdict is the outcome of a check.
type Verdict int

const (
	// Linearizable: an order of the operations exists that the lock model
	// accepts; mutual exclusion held.
	Linearizable Verdict = iota + 1
	// Illegal: no such order exists; two incompatible holds overlapped.
	Illegal
	// TimedOut: the search did not finish within the timeout.
	TimedOut
)

func (v Verdict) String() string {
	switch v {
	case Linearizable:
		return "linearizable"
	case Illegal:
		return "illegal"
	case TimedOut:
		return "unknown (timed out)"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// KeyResult is the verdict on one key's history.
type KeyResult struct {
	Key     string
	Verdict Verdict
	// Ops is the number of porcupine operations checked; Holds the number
	// of holds of non-zero length among them.
	Ops, Holds int
}

// Result is the verdict on a history.
type Result struct {
	// Verdict is Illegal if a key is Illegal, else TimedOut if a key timed
	// out, else Linearizable.
	Verdict Verdict
	// Keys holds one result per key, ordered by key.
	Keys []KeyResult
	// Unmatched counts releases whose lock no granted acquire has: a bug
	// in the recording, reported rather than hidden.
	Unmatched int
	// Visualized is the key whose visualization was written to
	// Options.Visualize, or "".
	Visualized string
}

// IllegalKeys lists the keys whose history is Illegal, in key order.
func (r Result) IllegalKeys() []string {
	var keys []string
	for _, k := range r.Keys {
		if k.Verdict == Illegal {
			keys = append(keys, k.Key)
		}
	}
	return keys
}

// Check decides, key by key, whether the history ops (in any order) is
// linearizable with respect to the lock model. It returns an error for a
// malformed history (an invalid kind, outcome or mode, a granted acquire
// without a lock id, two granted acquires with one lock id), and for a
// visualization it could not write, with the Result.
func Check(ops []Op, opt Options) (Result, error) {
	hs, unmatched, err := build(ops, opt.CallWindows)
	if err != nil {
		return Result{}, err
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.Now().Add(timeout)
	res := Result{Verdict: Linearizable, Keys: make([]KeyResult, len(hs)), Unmatched: unmatched}
	var visErr error
	for i, h := range hs {
		kr := KeyResult{Key: h.key, Verdict: Linearizable, Ops: len(h.ops), Holds: h.holds}
		var bad *porcupine.LinearizationInfo // of the first segment not linearizable
		for _, seg := range segments(h.ops) {
			left := time.Until(deadline)
			if left <= 0 {
				kr.Verdict = TimedOut
				break
			}
			// The verbose check waits for its search to stop, so that no
			// goroutine outlives Check.
			r, info := porcupine.CheckOperationsVerbose(model, seg, left)
			v := verdict(r)
			if v != Linearizable && (bad == nil || v == Illegal) {
				bad = &info
			}
			if v == Illegal {
				kr.Verdict = Illegal
				break // it decides the key
			}
			if v == TimedOut {
				kr.Verdict = TimedOut // an illegal segment later still decides
			}
		}
		res.Keys[i] = kr
		switch {
		case kr.Verdict == Illegal:
			res.Verdict = Illegal
		case kr.Verdict == TimedOut && res.Verdict == Linearizable:
			res.Verdict = TimedOut
		}
		if bad != nil && opt.Visualize != "" && res.Visualized == "" && visErr == nil {
			if err := porcupine.VisualizePath(model, *bad, opt.Visualize); err != nil {
				visErr = fmt.Errorf("linearize: visualize key %q: %w", h.key, err)
				continue
			}
			res.Visualized = h.key
		}
	}
	return res, visErr
}

func verdict(r porcupine.CheckResult) Verdict {
	switch r {
	case porcupine.Ok:
		return Linearizable
	case porcupine.Illegal:
		return Illegal
	}
	return TimedOut
}
