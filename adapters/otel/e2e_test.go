package otel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

// newLocker makes a Locker over three real masters that reports to obs,
// with nodeTimeout bounding each call to a master.
func newLocker(t *testing.T, obs redlock.Observer, nodeTimeout time.Duration) *redlock.Locker {
	t.Helper()
	nodes := make([]redlock.Node, 3)
	for i := range nodes {
		n := pool.New(pool.Config{Addr: redlocktest.NewMaster(t).Addr()})
		t.Cleanup(func() { n.Close() })
		nodes[i] = n
	}
	locker, err := redlock.New(nodes, redlock.Config{Observer: obs, NodeTimeout: nodeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	return locker
}

// A real Locker over three real masters reports a Lock, a TryLock refused
// because the lock is held, and the Unlock: two acquisitions by outcome,
// one hold, their spans, and no node errors or losses.
func TestLockerEndToEnd(t *testing.T) {
	obs, r := newObserver(t)
	// A generous node timeout: a loaded machine must not turn into node
	// errors in a test that asserts there are none.
	locker := newLocker(t, obs, 2*time.Second)
	ctx := context.Background()
	lk, err := locker.Lock(ctx, "e2e", time.Minute)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if _, err := locker.TryLock(ctx, "e2e", time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("TryLock of a held lock: %v, want ErrNotAcquired", err)
	}
	if err := lk.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}

	ps := r.points(t)
	const acquired = "{quorumlock.lock.kind=lock,quorumlock.outcome=acquired}"
	const refused = "{quorumlock.lock.kind=lock,quorumlock.outcome=not_acquired}"
	const released = "{quorumlock.lock.kind=lock,quorumlock.outcome=released}"
	for _, name := range []string{"quorumlock.acquire.duration" + acquired, "quorumlock.acquire.duration" + refused, "quorumlock.hold.duration" + released} {
		if p := ps[name]; p.Count != 1 || p.Sum <= 0 {
			t.Errorf("%s = %+v, want one positive duration", name, p)
		}
		delete(ps, name)
	}
	wantPoints(t, ps, map[string]point{
		"quorumlock.acquisitions" + acquired: {Sum: 1},
		"quorumlock.acquisitions" + refused:  {Sum: 1},
	})

	var names []string
	for _, s := range r.spans.Ended() {
		names = append(names, s.Name())
	}
	if got, want := strings.Join(names, " "), "quorumlock.acquire quorumlock.acquire quorumlock.hold"; got != want {
		t.Errorf("spans %q, want %q", got, want)
	}
}

// A lock left to expire is reported lost: the loss is counted and makes a
// quorumlock.lost span.
func TestLockerLossEndToEnd(t *testing.T) {
	obs, r := newObserver(t)
	locker := newLocker(t, obs, 300*time.Millisecond) // the TTL must exceed it
	lk, err := locker.Lock(context.Background(), "e2e-expire", time.Second)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	<-lk.Done()
	if !errors.Is(lk.Err(), redlock.ErrLockLost) {
		t.Fatalf("Err after Done: %v, want ErrLockLost", lk.Err())
	}
	// Done closes before the Observer is told: await the count.
	const losses = "quorumlock.losses{quorumlock.lock.kind=lock}"
	for deadline := time.Now().Add(10 * time.Second); r.points(t)[losses].Sum != 1; {
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached 1: %v", losses, keys(r.points(t)))
		}
		time.Sleep(time.Millisecond)
	}
	var lost int
	for _, s := range r.spans.Ended() {
		if s.Name() == "quorumlock.lost" {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("%d quorumlock.lost spans, want 1", lost)
	}
}

// The spans nest in the caller's trace: an acquisition's and a hold's span
// are children of the request span whose context the calls got, with its
// trace id.
func TestSpansNestInTheRequestTrace(t *testing.T) {
	obs, r := newObserver(t)
	locker := newLocker(t, obs, 2*time.Second)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tracetest.NewSpanRecorder()))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	ctx, request := tp.Tracer("test").Start(context.Background(), "request")
	lk, err := locker.Lock(ctx, "nested", time.Minute)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	if err := lk.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	request.End()
	want := request.SpanContext()
	seen := 0
	for _, sp := range r.spans.Ended() {
		if sp.Name() != "quorumlock.acquire" && sp.Name() != "quorumlock.hold" {
			continue
		}
		seen++
		if sp.Parent().SpanID() != want.SpanID() || sp.SpanContext().TraceID() != want.TraceID() {
			t.Errorf("%s: trace %s, parent %s; want trace %s, parent %s", sp.Name(),
				sp.SpanContext().TraceID(), sp.Parent().SpanID(), want.TraceID(), want.SpanID())
		}
	}
	if seen != 2 {
		t.Fatalf("%d acquire and hold spans, want 2", seen)
	}
}
