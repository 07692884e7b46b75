package workload

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Contexts that end at random points of a call. A caller's context may end
// at any moment of a call of the library: during an attempt's fan-out,
// while the failed attempt's releases go out, in the wait between two
// attempts (the backoff, the wake-on-release subscription), in an Extend
// or an Unlock. Whatever the moment, the library must leave nothing
// behind and never report a lock it does not hold. EndAtRandom gives a
// call such a context; the workload's call sites draw one for a share of
// their calls (callCtx, e.g. callCtx(ctx, s.rng, s.cfg.Wait) for an
// acquire, callCtx(s.bg, s.rng, ReleaseTimeout) for an Extend or an
// Unlock), and Run gives each cycle of a client one (cycleCtx), so that a
// cycle's acquires, and the waits between their attempts, end at random
// points too.

// ErrEndedAtRandom is the cause (context.Cause) of a context that
// EndAtRandom ended.
var ErrEndedAtRandom = errors.New("workload: the context ended at a random point of the call")

// pEndAtRandom is the share of the random workload's calls (and cycles)
// whose context ends at a random point.
const pEndAtRandom = 0.15

// endWithin bounds the point at which such a context ends, from the
// call's start: a few node timeouts, which spans an attempt's fan-out, its
// releases, the wait before the next attempt and that attempt, and the
// whole of most Extends and Unlocks.
const endWithin = 4 * NodeTimeout

// EndAtRandom returns a context derived from parent that, with probability
// p, ends at a point drawn uniformly in [0, within) from now (its cause
// ErrEndedAtRandom): at a random point of the call it is given to. Else
// it ends with parent only. The draws come from rng, so that a seed
// replays the same points (where they fall in a call still depends on the
// machine). Call the CancelFunc when the call returned.
func EndAtRandom(parent context.Context, rng *rand.Rand, p float64, within time.Duration) (context.Context, context.CancelFunc) {
	at, ends := drawEnd(rng, p, within)
	ctx, cancel := context.WithCancelCause(parent)
	if !ends {
		return ctx, func() { cancel(context.Canceled) }
	}
	t := time.AfterFunc(at, func() { cancel(ErrEndedAtRandom) })
	return ctx, func() {
		t.Stop()
		cancel(context.Canceled)
	}
}

// drawEnd draws whether a context ends at random (probability p) and at
// which point of [0, within).
func drawEnd(rng *rand.Rand, p float64, within time.Duration) (at time.Duration, ends bool) {
	if rng.Float64() >= p || within <= 0 {
		return 0, false
	}
	return time.Duration(rng.Int64N(int64(within))), true
}

// callCtx bounds one call of the random workload by timeout and, for a
// share of the calls (pEndAtRandom), ends it at a random point of its
// first endWithin, drawn from rng (the client's). The workload's call
// sites (acquires, Extends, Unlocks) take their contexts from it.
func callCtx(parent context.Context, rng *rand.Rand, timeout time.Duration) (context.Context, context.CancelFunc) {
	tctx, stop := context.WithTimeout(parent, timeout)
	ctx, cancel := EndAtRandom(tctx, rng, pEndAtRandom, endWithin)
	return ctx, func() {
		cancel()
		stop()
	}
}

// cycleCtx is the context of one cycle of a client: for a share of the
// cycles (pEndAtRandom) it ends at a random point of the cycle's first
// endWithin, drawn from rng (the client's), so that an acquire of the
// cycle, or the wait between its attempts, ends there.
func cycleCtx(parent context.Context, rng *rand.Rand) (context.Context, context.CancelFunc) {
	return EndAtRandom(parent, rng, pEndAtRandom, endWithin)
}
