package scenario_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/scenario"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// want is what each scenario must show, asserted on the Result itself on top
// of the scenario's own checks.
var want = map[string]func(t *testing.T, r scenario.Result){
	"safe-minority": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0, "overlaps = %d, want 0", r.Overlaps)
		expect(t, r.Acquisitions >= 15, "acquisitions = %d, want clients to keep acquiring", r.Acquisitions)
		expect(t, r.Faults > 0, "faults = %d", r.Faults)
	},
	"majority-down": func(t *testing.T, r scenario.Result) {
		want := r.Clients + 1 // the warm-ups and the one after recovery
		expect(t, r.Acquisitions == want, "acquisitions = %d, want %d: only the warm-ups and the one after recovery", r.Acquisitions, want)
		expect(t, r.Attempts > 1, "attempts = %d", r.Attempts)
	},
	"split-vote": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0, "overlaps = %d, want 0", r.Overlaps)
		expect(t, r.Acquisitions >= scenario.Nodes, "acquisitions = %d", r.Acquisitions)
	},
	"restart-unsafe": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps > 0, "overlaps = %d, want the restart to produce one", r.Overlaps)
	},
	"restart-guarded": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0 && r.Acquisitions == 4, "overlaps = %d, acquisitions = %d; want 0 and 4 (B's warm-up, A, B, C)", r.Overlaps, r.Acquisitions)
	},
	"restart-guarded-acquired": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0 && r.Acquisitions == 3, "overlaps = %d, acquisitions = %d; want 0 and 3 (B's warm-up, A, B)", r.Overlaps, r.Acquisitions)
	},
	"restart-everysec": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps > 0, "overlaps = %d, want the power loss to produce one", r.Overlaps)
	},
	"restart-everysec-durable": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0 && r.Acquisitions == 2, "overlaps = %d, acquisitions = %d; want 0 and 2", r.Overlaps, r.Acquisitions)
	},
	"failover-async": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps > 0, "overlaps = %d, want the failover to produce one", r.Overlaps)
	},
	"failover-replicated": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0 && r.Acquisitions == 2, "overlaps = %d, acquisitions = %d; want 0 and 2", r.Overlaps, r.Acquisitions)
	},
	"restart-aof": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0 && r.Acquisitions == 2, "overlaps = %d, acquisitions = %d; want 0 and 2", r.Overlaps, r.Acquisitions)
	},
	"restart-delayed": func(t *testing.T, r scenario.Result) {
		want := scenario.RestartHistory + 2 // A's history, A, B
		expect(t, r.Overlaps == 0 && r.Acquisitions == want, "overlaps = %d, acquisitions = %d; want 0 and %d", r.Overlaps, r.Acquisitions, want)
	},
	"clock-jump": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps > 0, "overlaps = %d, want the jump to produce one", r.Overlaps)
	},
	"paused-holder": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0, "overlaps = %d, want 0", r.Overlaps)
		expect(t, r.StaleRejected > 0 && r.LateWrites >= r.StaleRejected, "stale rejected %d, late writes %d", r.StaleRejected, r.LateWrites)
	},
	"paused-client": func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0, "overlaps = %d, want 0", r.Overlaps)
		expect(t, r.Acquisitions == 2, "acquisitions = %d, want B's two only", r.Acquisitions)
	},
}

// safeKind is what every safe scenario of the generative workload must
// show: no overlap, no violation of any invariant, both checkers agreeing.
func safeKind(t *testing.T, r scenario.Result) {
	expect(t, r.Overlaps == 0, "overlaps = %d, want 0", r.Overlaps)
	for inv, n := range r.Violations {
		expect(t, n == 0, "%s: %d violations, want 0 (%v)", inv, n, r.Violation)
	}
	expect(t, r.Agree, "checkers disagree: %s vs %s", r.Checker, r.Linearize)
	// The scenario's own "clients keep acquiring" check bounds the rate per
	// kind (renewed holds are long: 2 in the short form can be all).
	expect(t, r.Acquisitions > 0, "acquisitions = %d, want clients to keep acquiring", r.Acquisitions)
	expect(t, r.Faults > 0, "faults = %d", r.Faults)
}

func init() {
	want["safe-command"] = func(t *testing.T, r scenario.Result) {
		safeKind(t, r)
		expect(t, r.Acquisitions >= 3, "acquisitions (jobs started) = %d", r.Acquisitions)
	}
	want["election"] = safeKind // its own checks name each property of the election
	for _, name := range []string{"safe-plain", "safe-reentrant", "safe-rw", "safe-renew", "safe-extend", "safe-semaphore", "safe-multi", "safe-fair", "safe-mixed"} {
		want[name] = safeKind
	}
	// The restart matrix: A and B acquire once each (B's long-lived warm-up
	// too), and never together.
	want["identity-refused"] = func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0, "overlaps = %d", r.Overlaps)
	}
	want["third-party-node"] = want["identity-refused"]
	want["unlock-force-spares-data"] = want["identity-refused"]
	want["durable-idle"] = func(t *testing.T, r scenario.Result) {
		expect(t, r.Acquisitions == 2, "acquisitions = %d, want 2", r.Acquisitions)
	}
	want["slow-grant"] = func(t *testing.T, r scenario.Result) {
		expect(t, r.Acquisitions == 5, "acquisitions = %d, want 5", r.Acquisitions)
		for inv, n := range r.Violations {
			expect(t, n == 0, "%s: %d violations", inv, n)
		}
	}
	want["close-per-lock"] = func(t *testing.T, r scenario.Result) {
		expect(t, r.Acquisitions == 10, "acquisitions = %d, want 10", r.Acquisitions)
	}
	want["restart-command"] = func(t *testing.T, r scenario.Result) {
		expect(t, r.Overlaps == 0 && r.Acquisitions >= 2, "overlaps = %d, jobs started = %d; want 0 and A's and B's at least", r.Overlaps, r.Acquisitions)
	}
	for _, s := range scenario.All() {
		if s.Driven == nil || want[s.Name] != nil {
			continue
		}
		grants := 2
		if s.Driven.Lifetime == "long-lived" && strings.HasPrefix(s.Name, "restart-") && !strings.Contains(s.Name, "everysec") {
			grants = 3 // B's warm-up
		}
		want[s.Name] = func(t *testing.T, r scenario.Result) {
			expect(t, r.Overlaps == 0 && r.Acquisitions == grants, "overlaps = %d, acquisitions = %d; want 0 and %d", r.Overlaps, r.Acquisitions, grants)
			expect(t, r.Driven != nil && *r.Driven == *s.Driven, "driven %+v, want %+v", r.Driven, s.Driven)
		}
	}
}

func expect(t *testing.T, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
}

// watchdog is the scenarios' watchdog that QUORUMLOCK_CHAOS_WATCHDOG sets
// (a duration), or 0 for the default: the mutation self-test shortens it,
// so that a defect that hangs a scenario costs it less time.
func watchdog(t *testing.T) time.Duration {
	v := os.Getenv("QUORUMLOCK_CHAOS_WATCHDOG")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("QUORUMLOCK_CHAOS_WATCHDOG=%q: %v", v, err)
	}
	return d
}

// TestScenarios runs every scenario in its short form on every backend
// usable here.
func TestScenarios(t *testing.T) {
	if len(want) != len(scenario.All()) {
		t.Fatalf("%d scenarios, %d with expectations", len(scenario.All()), len(want))
	}
	for _, backend := range chaostest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			open := chaostest.Opener(t, backend)
			// Over the whole suite (not a -run of some scenarios): every
			// entry point must lock.
			var mu sync.Mutex
			acquired, ran := map[workload.Transport]int{}, 0
			t.Cleanup(func() { // after every scenario, parallel ones included
				for _, tr := range workload.Transports {
					if acquired[tr] == 0 && ran == len(scenario.All()) {
						t.Errorf("no client over %s acquired a lock in the whole suite (%v)", tr, acquired)
					}
				}
			})
			for _, s := range scenario.All() {
				t.Run(s.Name, func(t *testing.T) {
					chaostest.SkipScenario(t, backend, s.Name)
					if backend == "local" {
						// Each scenario has masters, proxies and clients of
						// its own, and spends most of its time waiting for
						// TTLs to pass: go test's -parallel (GOMAXPROCS by
						// default) of them run at once.
						t.Parallel()
					}
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					r := s.Run(ctx, scenario.Options{Backend: backend, Open: open, Duration: scenario.Short, Watchdog: watchdog(t)})
					mu.Lock()
					ran++
					for _, u := range r.Transports {
						acquired[u.Transport] += u.Acquired
					}
					mu.Unlock()
					t.Logf("seed %d, %v: %s", r.Seed, r.Elapsed.Round(time.Millisecond), r.Outcome)
					for _, c := range r.Checks {
						t.Logf("  %-5t %s: %s", c.OK, c.Name, c.Detail)
					}
					for _, l := range r.Log {
						t.Logf("  %s", l)
					}
					if r.Verdict == scenario.Skip { // this backend or server cannot run it, and says why
						t.Skip(r.Reason)
					}
					if r.Verdict != scenario.Pass {
						t.Fatalf("verdict %s (%s); replay with seed %d", r.Verdict, r.Reason, r.Seed)
					}
					want[s.Name](t, r)
				})
			}
		})
	}
}

func TestLookup(t *testing.T) {
	for _, s := range scenario.All() {
		if got, ok := scenario.Lookup(s.Name); !ok || got.Name != s.Name {
			t.Errorf("Lookup(%q) = %q, %t", s.Name, got.Name, ok)
		}
		if s.Invariant == "" || s.Expect == "" {
			t.Errorf("%s: no invariant or expectation", s.Name)
		}
	}
	if _, ok := scenario.Lookup("nope"); ok {
		t.Error(`Lookup("nope") found a scenario`)
	}
}
