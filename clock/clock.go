package clock

import (
	"sync"
	"time"
)

// Clock tells the time. Locks measure elapsed time as the difference of two
// Now readings, so an implementation must return times with a monotonic
// reading (as time.Now does) or times that never go backwards.
type Clock interface {
	Now() time.Time
}

// Real is the system's monotonic clock: time.Now.
var Real Clock = realClock{}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// MinDrift is the fixed part of the drift allowance: it covers the
// millisecond resolution of Redis key expiry.
const MinDrift = 2 * time.Millisecond

// Drift is the clock-drift allowance the Redlock algorithm subtracts from a
// lock's validity: ttl*factor + MinDrift. A negative factor counts as zero.
func Drift(ttl time.Duration, factor float64) time.Duration {
	if factor < 0 {
		factor = 0
	}
	return time.Duration(float64(ttl)*factor) + MinDrift
}

// Skewed is a clock that runs at a rate relative to a base clock and can be
// made to jump. Rate 1 keeps pace with the base, 2 runs twice as fast, 0.5
// half as fast. It is safe for concurrent use.
//
// A Skewed clock that jumps backwards, or whose rate is set to zero or less,
// breaks the monotonic assumption of the lock on purpose: that is what the
// chaos harness uses it for.
type Skewed struct {
	base Clock

	mu       sync.Mutex
	rate     float64
	anchor   time.Time // base reading at the last rate change
	reported time.Time // our reading at the last rate change
}

// NewSkewed returns a clock that starts at base.Now() and runs at rate.
func NewSkewed(base Clock, rate float64) *Skewed {
	if base == nil {
		base = Real
	}
	now := base.Now()
	return &Skewed{base: base, rate: rate, anchor: now, reported: now}
}

// Now returns the skewed time.
func (s *Skewed) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nowLocked()
}

func (s *Skewed) nowLocked() time.Time {
	elapsed := s.base.Now().Sub(s.anchor)
	return s.reported.Add(time.Duration(float64(elapsed) * s.rate))
}

// Jump moves the clock by d at once (forwards for d > 0).
func (s *Skewed) Jump(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reported = s.nowLocked().Add(d)
	s.anchor = s.base.Now()
}

// SetRate changes the rate from now on.
func (s *Skewed) SetRate(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reported = s.nowLocked()
	s.anchor = s.base.Now()
	s.rate = rate
}
