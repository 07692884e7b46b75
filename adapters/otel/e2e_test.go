package otel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
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
	addrs := make([]string, 3)
	for i := range addrs {
		addrs[i] = redlocktest.NewMaster(t).Addr()
	}
	return lockerOver(t, obs, nodeTimeout, addrs...)
}

// lockerOver makes a Locker over the masters at addrs that reports to obs.
func lockerOver(t *testing.T, obs redlock.Observer, nodeTimeout time.Duration, addrs ...string) *redlock.Locker {
	t.Helper()
	nodes := make([]redlock.Node, len(addrs))
	for i, addr := range addrs {
		n := pool.New(pool.Config{Addr: addr})
		t.Cleanup(func() { n.Close() })
		nodes[i] = n
	}
	locker, err := redlock.New(nodes, redlock.Config{Observer: obs, NodeTimeout: nodeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { locker.Close(context.Background()) })
	return locker
}

// deadAddr returns a loopback address where nothing listens: a master that
// is down, whose every call fails at once (connection refused).
func deadAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// spanNames lists the ended spans' names in order.
func spanNames(r *recorder) []string {
	var names []string
	for _, s := range r.spans.Ended() {
		names = append(names, s.Name())
	}
	return names
}

// awaitSpans waits until n spans named name have ended: a master's state
// change is told from a goroutine of the Locker's, after the call that saw
// it may have returned.
func awaitSpans(t *testing.T, r *recorder, name string, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if count(spanNames(r), name) >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("spans %v: want %d %q", spanNames(r), n, name)
		}
	}
}

// count is the number of times s occurs in ss.
func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// acquireOutcome returns the outcome of the only quorumlock.acquire span,
// and its status.
func acquireOutcome(t *testing.T, r *recorder) (string, codes.Code) {
	t.Helper()
	var acquires []sdktrace.ReadOnlySpan
	for _, s := range r.spans.Ended() {
		if s.Name() == "quorumlock.acquire" {
			acquires = append(acquires, s)
		}
	}
	if len(acquires) != 1 {
		t.Fatalf("spans %v, want one quorumlock.acquire", spanNames(r))
	}
	out, _ := attr(acquires[0], "quorumlock.outcome")
	return out.AsString(), acquires[0].Status().Code
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

	if got, want := strings.Join(spanNames(r), " "), "quorumlock.acquire quorumlock.acquire quorumlock.hold"; got != want {
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

// A Lock that waits until its deadline on masters that are down is
// labelled unavailable, not timeout; its storm of failed calls is counted,
// and makes one quorumlock.node_down span per dead master, no span per
// call.
func TestDeadMastersUntilTheDeadline(t *testing.T) {
	obs, r := newObserver(t)
	locker := lockerOver(t, obs, 100*time.Millisecond, redlocktest.NewMaster(t).Addr(), deadAddr(t), deadAddr(t))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	// A short TTL: the releases of failed attempts are sent again to the
	// dead masters until it passed, and Close waits for them.
	_, err := locker.Lock(ctx, "dead", time.Second)
	if !errors.Is(err, redlock.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock: %v, want ErrUnavailable and the deadline", err)
	}
	if out, status := acquireOutcome(t, r); out != "unavailable" || status != codes.Error {
		t.Errorf("acquire outcome %q, status %v; want unavailable, Error", out, status)
	}
	if p := r.points(t)["quorumlock.acquisitions{quorumlock.lock.kind=lock,quorumlock.outcome=unavailable}"]; p.Sum != 1 {
		t.Errorf("acquisitions by outcome %v, want one unavailable", keys(r.points(t)))
	}

	awaitSpans(t, r, "quorumlock.node_down", 2)
	var failed float64
	for k, p := range r.points(t) {
		if strings.HasPrefix(k, "quorumlock.node.errors{") {
			failed += p.Sum
		}
	}
	var attempts attribute.Value
	for _, s := range r.spans.Ended() {
		if s.Name() == "quorumlock.acquire" {
			attempts, _ = attr(s, "quorumlock.attempts")
		}
	}
	t.Logf("%v failed calls in %d attempts", failed, attempts.AsInt64())
	if attempts.AsInt64() < 2 || failed < float64(2*attempts.AsInt64()) {
		t.Errorf("%v failed calls in %d attempts, want a storm: at least two attempts, each failing on both dead masters", failed, attempts.AsInt64())
	}
	names := spanNames(r)
	slices.Sort(names)
	if got, want := strings.Join(names, " "), "quorumlock.acquire quorumlock.node_down quorumlock.node_down"; got != want {
		t.Errorf("spans %q, want %q: one per acquisition and per master that went down, none per failed call", got, want)
	}
}

// A Lock that waits until its deadline for a lock someone else holds is
// labelled not_acquired (the lock is held), not timeout, and is no fault.
func TestHeldUntilTheDeadline(t *testing.T) {
	obs, r := newObserver(t)
	locker := newLocker(t, obs, 2*time.Second)
	holder, err := locker.Lock(context.Background(), "held", time.Minute)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	defer holder.Unlock(context.Background())
	r.spans.Reset()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := locker.Lock(ctx, "held", time.Minute); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redlock.ErrUnavailable) {
		t.Fatalf("Lock of a held lock: %v, want the deadline, not ErrUnavailable", err)
	}
	if out, status := acquireOutcome(t, r); out != "not_acquired" || status != codes.Unset {
		t.Errorf("acquire outcome %q, status %v; want not_acquired, Unset", out, status)
	}
}

// A master that stops answering and comes back makes a quorumlock.node_down
// span and then a quorumlock.node_up span, for that master only.
func TestMasterDownAndUp(t *testing.T) {
	obs, r := newObserver(t)
	masters := []*redlocktest.Master{redlocktest.NewMaster(t), redlocktest.NewMaster(t), redlocktest.NewMaster(t)}
	const nodeTimeout = 100 * time.Millisecond
	locker := lockerOver(t, obs, nodeTimeout, masters[0].Addr(), masters[1].Addr(), masters[2].Addr())
	frozen := masters[2]
	if err := frozen.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			frozen.Resume()
		}
	}()
	for i := range 3 { // a quorum without it, and its calls time out
		// A short TTL: Close waits for the deletes sent again to the
		// frozen master until it passed.
		lk, err := locker.Lock(context.Background(), fmt.Sprint("k", i), time.Second)
		if err != nil {
			t.Fatalf("Lock with one master frozen: %v", err)
		}
		lk.Unlock(context.Background())
	}
	awaitSpans(t, r, "quorumlock.node_down", 1)

	if err := frozen.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	// Lock until the master was seen answering, and for longer than a call
	// sent before it came back may take to time out: the last thing heard
	// of it is an answer.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for since := time.Now(); count(spanNames(r), "quorumlock.node_up") == 0 || time.Since(since) < 3*nodeTimeout; time.Sleep(10 * time.Millisecond) {
		lk, err := locker.Lock(ctx, "after", time.Second)
		if err != nil {
			t.Fatalf("Lock after the master came back: %v", err)
		}
		lk.Unlock(ctx)
	}
	if err := locker.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The state changes are told in order, from a goroutine of the
	// Locker's: await as many ups as downs.
	var states []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		states = states[:0]
		for _, s := range r.spans.Ended() {
			if s.Name() != "quorumlock.node_down" && s.Name() != "quorumlock.node_up" {
				continue
			}
			if addr, _ := attr(s, "quorumlock.node.address"); addr.AsString() != frozen.Addr() {
				t.Fatalf("%s for %s, want only the frozen master %s", s.Name(), addr.AsString(), frozen.Addr())
			}
			states = append(states, strings.TrimPrefix(s.Name(), "quorumlock.node_"))
		}
		if count(states, "down") == count(states, "up") || time.Now().After(deadline) {
			break
		}
	}
	for i, st := range states {
		if want := []string{"down", "up"}[i%2]; st != want {
			t.Fatalf("states %v, want down and up by turns", states)
		}
	}
	if len(states) == 0 || len(states)%2 != 0 || len(states) > 4 {
		t.Errorf("states %v, want down then up (twice at most: a call sent before the master came back may time out after an answer)", states)
	}
}
