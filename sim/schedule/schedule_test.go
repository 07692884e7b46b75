package schedule_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/sim/schedule"
)

func TestGenerateIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		a, b := schedule.Generate(seed, schedule.Options{}), schedule.Generate(seed, schedule.Options{})
		if !bytes.Equal(a.JSON(), b.JSON()) {
			t.Fatalf("seed %d: two schedules differ", seed)
		}
	}
}

func TestParseReadsJSON(t *testing.T) {
	s := schedule.Generate(7, schedule.Options{})
	p, err := schedule.Parse(s.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p.JSON(), s.JSON()) || p.Size() != s.Size() {
		t.Fatalf("read back differs:\n%s\n%s", s.JSON(), p.JSON())
	}
	c := s.Clone()
	c.Ops[0] = nil
	if s.Size() == c.Size() && len(s.Ops[0]) > 0 {
		t.Fatal("Clone shares its operations")
	}
}

// TestSafeSchedulesKeepAssumptions checks what Generate promises without
// Unsafe: no failover without durable replica grants, no clock step
// beyond a millisecond, the guard off only where every master persists
// every write, at most a minority of masters losing data at once.
func TestSafeSchedulesKeepAssumptions(t *testing.T) {
	for seed := uint64(1); seed <= 2000; seed++ {
		s := schedule.Generate(seed, schedule.Options{})
		always := true
		for _, m := range s.Masters {
			always = always && m.Persist == "always"
		}
		if s.Lib.Guard == "off" && !always && !s.Lib.Delayed {
			t.Fatalf("seed %d: guard off on masters that lose writes", seed)
		}
		var longest time.Duration
		for _, ops := range s.Ops {
			for _, o := range ops {
				longest = max(longest, o.TTL.D())
				for _, e := range o.Extends {
					longest = max(longest, e.TTL.D())
				}
			}
		}
		for _, f := range s.Faults {
			switch f.Kind {
			case schedule.Failover:
				if s.Lib.Replicas == 0 {
					t.Fatalf("seed %d: failover without durable replica grants", seed)
				}
			case schedule.Crash:
				if s.Lib.Guard == "off" && s.Masters[f.Masters[0]].Persist != "always" && f.For.D() < longest {
					t.Fatalf("seed %d: guard off, and a master that loses data is down %v, less than the longest TTL %v", seed, f.For, longest)
				}
			case schedule.ClockStep:
				if d := f.Step.D(); d > 1e6 || d < -1e6 {
					t.Fatalf("seed %d: clock step %v", seed, d)
				}
			}
		}
	}
}
