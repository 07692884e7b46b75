package redlock_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// With 2 of 3 masters down an acquisition fails with ErrUnavailable (and
// ErrNotAcquired), so that a service can tell "Redis is down" from "the
// lock is held"; contention is never ErrUnavailable.
func TestErrUnavailable(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 100 * time.Millisecond})
	held, err := l.TryLock(t.Context(), "busy", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.TryLock(t.Context(), "busy", time.Minute)
	if !errors.Is(err, redlock.ErrNotAcquired) || errors.Is(err, redlock.ErrUnavailable) {
		t.Fatalf("a held key: %v, want ErrNotAcquired and not ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("QuorumError on several lines: %q", err)
	}
	held.Unlock(t.Context())
	for _, s := range servers[:2] {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	_, err = l.Lock(ctx, "free", time.Minute)
	if !errors.Is(err, redlock.ErrUnavailable) || !errors.Is(err, redlock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with 2 of 3 masters down: %v, want ErrUnavailable, ErrNotAcquired and the deadline", err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("QuorumError on several lines: %q", err)
	}
	states, err := l.Check(t.Context())
	if !errors.Is(err, redlock.ErrUnavailable) || len(states) != 3 || states[0].Err == nil || states[1].Err == nil || states[2].Err != nil {
		t.Fatalf("Check with 2 of 3 down: %+v, %v; want the two dead masters failing and ErrUnavailable", states, err)
	}
	for _, s := range servers[:2] {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	await(t, "Check passes once the masters are back", func() bool { _, err := l.Check(t.Context()); return err == nil })
}

// A Lock whose context ends while masters do not answer (frozen: they
// accept connections and answer nothing) matches ErrUnavailable, whether
// the context ended between attempts or in the middle of one. (Before, an
// attempt cut short by the context had its frozen masters pending, not
// failed, and the error read as "held" in about half the trials.)
func TestUnavailableWhenContextEndsMidAttempt(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 200 * time.Millisecond})
	warm(t, l, nodes, time.Second)
	for _, s := range servers[:2] {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		defer s.Resume()
	}
	for i := range 10 {
		// Deadlines that fall at every point of the 200ms attempts.
		ctx, cancel := context.WithTimeout(t.Context(), time.Duration(250+37*i)*time.Millisecond)
		_, err := l.Lock(ctx, "free", time.Second)
		cancel()
		if !errors.Is(err, redlock.ErrUnavailable) || !errors.Is(err, redlock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("try %d: Lock with 2 of 3 masters frozen: %v, want ErrUnavailable, ErrNotAcquired and the deadline", i, err)
		}
	}
}

type ctxKey struct{}

// ctxRecorder records each event's context value and the node states.
type ctxRecorder struct {
	redlock.NopObserver
	mu     sync.Mutex
	values map[string][]any // by event type
	states []redlock.NodeStateEvent
}

func (r *ctxRecorder) note(kind string, ctx context.Context) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.values == nil {
		r.values = map[string][]any{}
	}
	r.values[kind] = append(r.values[kind], ctx.Value(ctxKey{}))
}

func (r *ctxRecorder) Acquire(e redlock.AcquireEvent) { r.note("acquire", e.Context()) }
func (r *ctxRecorder) Release(e redlock.ReleaseEvent) { r.note("release", e.Context()) }
func (r *ctxRecorder) Renew(e redlock.RenewEvent)     { r.note("renew", e.Context()) }
func (r *ctxRecorder) Lost(e redlock.LostEvent)       { r.note("lost", e.Context()) }
func (r *ctxRecorder) NodeError(e redlock.NodeErrorEvent) {
	r.note("nodeerror", e.Context())
}
func (r *ctxRecorder) NodeState(e redlock.NodeStateEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, e)
}

func (r *ctxRecorder) got(kind string) []any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]any(nil), r.values[kind]...)
}

// Events carry the context of the call they are about (without its
// cancellation): an acquisition's, an Unlock's, and the acquisition's for
// the auto-renewal's Renew events and a loss.
func TestObserverEventsCarryContext(t *testing.T) {
	_, nodes := cluster(t, 3)
	rec := &ctxRecorder{}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: rec, AutoRenew: true})
	actx, cancel := context.WithCancel(context.WithValue(t.Context(), ctxKey{}, "request-1"))
	lk, err := l.TryLock(actx, "traced", 600*time.Millisecond)
	cancel() // the events after it still carry its values
	if err != nil {
		t.Fatal(err)
	}
	await(t, "a renewal", func() bool { return len(rec.got("renew")) > 0 })
	if err := lk.Unlock(context.WithValue(t.Context(), ctxKey{}, "request-2")); err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string]any{"acquire": "request-1", "renew": "request-1", "release": "request-2"} {
		got := rec.got(kind)
		if len(got) == 0 || got[0] != want {
			t.Errorf("%s events carry %v, want %q", kind, got, want)
		}
	}
}

// A master that dies is told once as failing and once as answering again
// (NodeStateObserver), however many calls fail meanwhile; SlogObserver
// logs it so: a Lock waiting on two dead masters writes two warnings about
// them, not one per attempt.
func TestObserverNodeStates(t *testing.T) {
	servers, nodes := cluster(t, 3)
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	rec := &ctxRecorder{}
	both := multiObserver{rec, redlock.SlogObserver(logger).(nodeStateObserver)}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: both, NodeTimeout: 50 * time.Millisecond})
	for _, s := range servers[:2] {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	// A short TTL: the masters that come back below are new to the
	// restart guard, which holds them back for the longest TTL used.
	if _, err := l.Lock(ctx, "k", time.Second); !errors.Is(err, redlock.ErrUnavailable) {
		t.Fatalf("Lock on two dead masters: %v", err)
	}
	await(t, "two masters reported failing", func() bool { return len(rec.statesSnapshot()) >= 2 })
	warnings := strings.Count(buf.String(), "level=WARN")
	if warnings > 3 { // two masters failing, one failed acquisition
		t.Errorf("SlogObserver wrote %d warnings for one Lock on dead masters:\n%s", warnings, buf.String())
	}
	for _, s := range servers[:2] {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	await(t, "a lock once the masters are back", func() bool {
		lk, err := l.TryLock(t.Context(), "k", time.Second)
		if err == nil {
			lk.Unlock(t.Context())
		}
		return err == nil
	})
	await(t, "both masters reported answering again", func() bool { return len(rec.statesSnapshot()) >= 4 })
	states := rec.statesSnapshot()
	if len(states) != 4 {
		t.Fatalf("node states %+v, want 2 down and 2 up", states)
	}
	down, up := 0, 0
	for _, s := range states {
		if s.Up {
			up++
		} else {
			down++
		}
	}
	if down != 2 || up != 2 {
		t.Fatalf("node states %+v, want 2 down and 2 up", states)
	}
	if !strings.Contains(buf.String(), "master answers again") {
		t.Errorf("SlogObserver did not log the masters coming back:\n%s", buf.String())
	}
}

func (r *ctxRecorder) statesSnapshot() []redlock.NodeStateEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]redlock.NodeStateEvent(nil), r.states...)
}

type nodeStateObserver interface {
	redlock.Observer
	redlock.NodeStateObserver
}

// multiObserver tells two observers.
type multiObserver struct{ a, b nodeStateObserver }

func (m multiObserver) Acquire(e redlock.AcquireEvent)     { m.a.Acquire(e); m.b.Acquire(e) }
func (m multiObserver) Release(e redlock.ReleaseEvent)     { m.a.Release(e); m.b.Release(e) }
func (m multiObserver) Renew(e redlock.RenewEvent)         { m.a.Renew(e); m.b.Renew(e) }
func (m multiObserver) Lost(e redlock.LostEvent)           { m.a.Lost(e); m.b.Lost(e) }
func (m multiObserver) NodeError(e redlock.NodeErrorEvent) { m.a.NodeError(e); m.b.NodeError(e) }
func (m multiObserver) NodeState(e redlock.NodeStateEvent) { m.a.NodeState(e); m.b.NodeState(e) }

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
