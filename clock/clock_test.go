package clock_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/clock"
)

// manual is a base clock that moves only when told.
type manual struct{ t time.Time }

func (m *manual) Now() time.Time          { return m.t }
func (m *manual) advance(d time.Duration) { m.t = m.t.Add(d) }

func TestDrift(t *testing.T) {
	tests := []struct {
		ttl    time.Duration
		factor float64
		want   time.Duration
	}{
		{10 * time.Second, 0.01, 100*time.Millisecond + clock.MinDrift},
		{time.Second, 0.01, 10*time.Millisecond + clock.MinDrift},
		{time.Second, 0, clock.MinDrift},
		{time.Second, -1, clock.MinDrift},
		{30 * time.Millisecond, 0.5, 15*time.Millisecond + clock.MinDrift},
	}
	for _, tt := range tests {
		if got := clock.Drift(tt.ttl, tt.factor); got != tt.want {
			t.Errorf("Drift(%v, %v) = %v, want %v", tt.ttl, tt.factor, got, tt.want)
		}
	}
}

func TestSkewedRateAndJump(t *testing.T) {
	base := &manual{t: time.Unix(1000, 0)}
	s := clock.NewSkewed(base, 2)
	start := s.Now()

	base.advance(time.Second)
	if got := s.Now().Sub(start); got != 2*time.Second {
		t.Fatalf("fast clock after 1s of base: %v, want 2s", got)
	}
	s.SetRate(0.5)
	base.advance(time.Second)
	if got := s.Now().Sub(start); got != 2500*time.Millisecond {
		t.Fatalf("after slowing down: %v, want 2.5s", got)
	}
	s.Jump(10 * time.Second)
	if got := s.Now().Sub(start); got != 12500*time.Millisecond {
		t.Fatalf("after a 10s jump: %v, want 12.5s", got)
	}
	s.Jump(-20 * time.Second)
	if got := s.Now().Sub(start); got != -7500*time.Millisecond {
		t.Fatalf("after a -20s jump: %v, want -7.5s", got)
	}
	base.advance(2 * time.Second)
	if got := s.Now().Sub(start); got != -6500*time.Millisecond {
		t.Fatalf("rate after jumps: %v, want -6.5s", got)
	}
}

func TestRealIsMonotonic(t *testing.T) {
	a := clock.Real.Now()
	b := clock.Real.Now()
	if b.Before(a) {
		t.Fatalf("Real went backwards: %v then %v", a, b)
	}
	if !strings.Contains(a.String(), " m=") {
		t.Fatal("Real.Now carries no monotonic reading")
	}
}
