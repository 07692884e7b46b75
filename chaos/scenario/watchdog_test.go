package scenario_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/scenario"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// stuckInTheLibrary blocks until release is closed, whatever its context
// says, as a library call that never returns would; the goroutine dump
// of a hung scenario must name it.
func stuckInTheLibrary(release <-chan struct{}) { <-release }

// failedCheck returns the check called name of r, and whether r has it.
func failedCheck(r scenario.Result, name string) (scenario.Check, bool) {
	for _, c := range r.Checks {
		if c.Name == name {
			return c, true
		}
	}
	return scenario.Check{}, false
}

// TestWatchdogFailsAHungScenario runs a scenario whose body gets stuck in
// a call that ignores its context: it must fail as hung, with every
// goroutine's stack, within the watchdog and its grace period; the
// runner must remove the cluster the body started; and what the
// abandoned body does once it wakes up must not reach the Result.
func TestWatchdogFailsAHungScenario(t *testing.T) {
	release := make(chan struct{})
	ended := make(chan error, 1)
	var addrs []string
	s := scenario.NewScenario("hangs", false, func(ctx context.Context, r *scenario.Run) error {
		e, err := r.Env(ctx, workload.EnvConfig{Clients: 1})
		if err != nil {
			ended <- err
			return err
		}
		addrs = cluster.Addrs(e.Cluster)
		r.Check("before the hang", true, "")
		stuckInTheLibrary(release)
		r.Check("after the hang", false, "must be dropped")
		r.Logf("after the hang")
		_, err = r.Env(ctx, workload.EnvConfig{Clients: 1})
		ended <- err
		return nil
	})
	const limit = time.Second
	start := time.Now()
	res := s.Run(context.Background(), scenario.Options{Duration: time.Second, Watchdog: limit})
	took := time.Since(start)
	close(release)
	if err := <-ended; !errors.Is(err, scenario.ErrAbandoned) {
		t.Errorf("the abandoned body's Env = %v, want ErrAbandoned", err)
	}

	if res.Verdict != scenario.Fail {
		t.Errorf("verdict %s (%s), want FAIL", res.Verdict, res.Reason)
	}
	if !strings.Contains(res.Aborted, "hung") || !strings.Contains(res.Aborted, "abandoned") || res.Outcome != res.Aborted {
		t.Errorf("aborted %q, outcome %q; want a hang, abandoned", res.Aborted, res.Outcome)
	}
	if c, ok := failedCheck(res, "ends within the watchdog"); !ok || c.OK {
		t.Errorf("checks %+v: want a failed 'ends within the watchdog'", res.Checks)
	}
	if _, ok := failedCheck(res, "after the hang"); ok {
		t.Error("a check made after the runner gave up reached the Result")
	}
	if !strings.Contains(res.Dump, "scenario_test.stuckInTheLibrary") || !strings.Contains(res.Dump, "goroutine ") {
		t.Errorf("the dump does not show where the body is stuck:\n%.2000s", res.Dump)
	}
	if took > limit+2*time.Second+time.Minute/2 {
		t.Errorf("Run took %v with a watchdog of %v", took, limit)
	}
	// The runner removed the cluster without the body.
	for _, a := range addrs {
		if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
			c.Close()
			t.Errorf("master %s still answers after the hung run", a)
		}
	}
}

// TestWatchdogCancelsTheBody checks that a hung body that ends with its
// context is waited for (not abandoned), and still fails.
func TestWatchdogCancelsTheBody(t *testing.T) {
	s := scenario.NewScenario("waits", false, func(ctx context.Context, r *scenario.Run) error {
		<-ctx.Done()
		return nil
	})
	res := s.Run(context.Background(), scenario.Options{Duration: time.Second, Watchdog: 200 * time.Millisecond})
	if res.Verdict != scenario.Fail || !strings.Contains(res.Aborted, "hung") || strings.Contains(res.Aborted, "abandoned") {
		t.Errorf("verdict %s, aborted %q; want FAIL, hung, not abandoned", res.Verdict, res.Aborted)
	}
}

// panicsHere panics; the stack in the Result must name it.
func panicsHere() { panic("boom") }

// TestPanicFailsItsScenario checks that a panic of a scenario's body, and
// one on a goroutine of the workload (the fault injector's), fail that
// scenario with the panic's stack, and that the next scenario runs and
// passes.
func TestPanicFailsItsScenario(t *testing.T) {
	body := scenario.NewScenario("panics", false, func(ctx context.Context, r *scenario.Run) error {
		panicsHere()
		return nil
	})
	injector := scenario.NewScenario("injector-panics", false, func(ctx context.Context, r *scenario.Run) error {
		e, err := r.Env(ctx, workload.EnvConfig{Clients: 1})
		if err != nil {
			return err
		}
		e.Faults.SendCommand = func(context.Context, int, int, string, ...any) error {
			panicsHere()
			return nil
		}
		wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return workload.Run(wctx, e, workload.Config{TTL: time.Second,
			Faults: fault.Schedule{{Kind: fault.Multi, Node: 0, Clients: []int{0}}}})
	})
	next := scenario.NewScenario("next", false, func(ctx context.Context, r *scenario.Run) error {
		r.Check("runs", true, "")
		return nil
	})
	for _, s := range []scenario.Scenario{body, injector} {
		res := s.Run(context.Background(), scenario.Options{Duration: time.Second})
		if res.Verdict != scenario.Fail || res.Aborted != "panicked: boom" {
			t.Errorf("%s: verdict %s, aborted %q, reason %q; want FAIL, panicked: boom", s.Name, res.Verdict, res.Aborted, res.Reason)
		}
		if c, ok := failedCheck(res, "no panic"); !ok || c.OK {
			t.Errorf("%s: checks %+v, want a failed 'no panic'", s.Name, res.Checks)
		}
		if !strings.Contains(res.Dump, "scenario_test.panicsHere") {
			t.Errorf("%s: the stack does not name the function that panicked:\n%s", s.Name, res.Dump)
		}
	}
	if res := next.Run(context.Background(), scenario.Options{Duration: time.Second}); res.Verdict != scenario.Pass {
		t.Errorf("the scenario after the panics: %s (%s)", res.Verdict, res.Reason)
	}
}

// TestSafeScenarioFailsOnAnyViolation checks that a safe scenario whose
// history violates an invariant other than mutual exclusion fails even
// though its own checks pass, and that an unsafe one is judged by its
// own checks.
func TestSafeScenarioFailsOnAnyViolation(t *testing.T) {
	leave := func(ctx context.Context, r *scenario.Run) error {
		e, err := r.Env(ctx, workload.EnvConfig{Clients: 1})
		if err != nil {
			return err
		}
		e.History.Left(0, "k", time.Now(), "left on purpose by the test")
		r.Check("its own check", true, "")
		return nil
	}
	for _, unsafe := range []bool{false, true} {
		res := scenario.NewScenario("leaves", unsafe, leave).Run(context.Background(), scenario.Options{Duration: time.Second})
		want, expected := scenario.Fail, scenario.ExpectSafe
		if unsafe {
			want, expected = scenario.Pass, scenario.ExpectOverlap
		}
		if res.Verdict != want || res.Expected != expected {
			t.Errorf("unsafe %t: verdict %s, expected %q; want %s, %q (checks %+v)", unsafe, res.Verdict, res.Expected, want, expected, res.Checks)
		}
	}
}
