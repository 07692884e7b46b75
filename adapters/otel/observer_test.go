package otel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/quorumlock/quorumlock/adapters/otel"
	"github.com/quorumlock/quorumlock/quorum"
	"github.com/quorumlock/quorumlock/redlock"
)

// attr returns the value of attribute key on span s, and whether it has it.
func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// onlySpan fails t unless exactly one span named name was recorded, and
// returns it.
func onlySpan(t *testing.T, r *recorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	ended := r.spans.Ended()
	if len(ended) != 1 || ended[0].Name() != name {
		names := make([]string, len(ended))
		for i, s := range ended {
			names[i] = s.Name()
		}
		t.Fatalf("spans %v, want one %q", names, name)
	}
	s := ended[0]
	if s.Parent().IsValid() {
		t.Errorf("span %q has parent %v, want a root span", name, s.Parent())
	}
	return s
}

// An acquisition is counted and timed by kind and outcome, and its span
// covers the wait; the outcome tells contention from failures by what the
// masters said, also when the call then waited until its context ended.
func TestAcquireOutcome(t *testing.T) {
	nodeTimeout := fmt.Errorf("master 2: %w", context.DeadlineExceeded)
	noIdentity := fmt.Errorf("master 3: %w: the restart guard cannot apply to it", redlock.ErrInvalid)
	for _, tc := range []struct {
		name    string
		err     error
		outcome string
		status  codes.Code
	}{
		{"acquired", nil, "acquired", codes.Unset},
		{"held elsewhere", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Refused: 2, Granted: 1}, "not_acquired", codes.Unset},
		{"masters down", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Failed: 3, NodeErrors: nodeTimeout}, "unavailable", codes.Error},
		{"late quorum", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Granted: 3, Late: true}, "late", codes.Error},
		{"held until the deadline", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Refused: 3, Cause: context.DeadlineExceeded}, "not_acquired", codes.Unset},
		{"held until canceled", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Refused: 2, Failed: 1, NodeErrors: nodeTimeout, Cause: context.Canceled}, "not_acquired", codes.Unset},
		{"down until the deadline", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Granted: 1, Failed: 2, NodeErrors: nodeTimeout, Cause: context.DeadlineExceeded}, "unavailable", codes.Error},
		{"misconfigured master", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Granted: 1, Failed: 2, NodeErrors: noIdentity}, "invalid", codes.Error},
		{"misconfigured until the deadline", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Refused: 1, Failed: 2, NodeErrors: noIdentity, Cause: context.DeadlineExceeded}, "invalid", codes.Error},
		{"nothing learned by the deadline", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Pending: 3, Cause: context.DeadlineExceeded}, "timeout", codes.Error},
		{"nothing learned when canceled", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Pending: 3, Cause: context.Canceled}, "canceled", codes.Error},
		{"closed", &redlock.QuorumError{Op: "lock", Key: "k", Nodes: 3, Quorum: 2, Pending: 3, Cause: redlock.ErrClosed}, "error", codes.Error},
		{"invalid", fmt.Errorf("%w: empty key", redlock.ErrInvalid), "invalid", codes.Error},
		{"unavailable, not a QuorumError", fmt.Errorf("semaphore: %w", redlock.ErrUnavailable), "unavailable", codes.Error},
		{"plain context error", context.Canceled, "canceled", codes.Error},
		{"other", errors.New("boom"), "error", codes.Error},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, r := newObserver(t)
			wait := 1500 * time.Millisecond
			obs.Acquire(redlock.AcquireEvent{Key: "order:7", Kind: "fenced", Wait: wait, Attempts: 4, Err: tc.err})

			attrs := "{quorumlock.lock.kind=fenced,quorumlock.outcome=" + tc.outcome + "}"
			wantPoints(t, r.points(t), map[string]point{
				"quorumlock.acquisitions" + attrs:     {Sum: 1},
				"quorumlock.acquire.duration" + attrs: {Count: 1, Sum: 1.5},
			})

			s := onlySpan(t, r, "quorumlock.acquire")
			if got := s.EndTime().Sub(s.StartTime()); got != wait {
				t.Errorf("span lasts %v, want the wait %v", got, wait)
			}
			for key, want := range map[string]attribute.Value{
				"quorumlock.lock.key":  attribute.StringValue("order:7"),
				"quorumlock.lock.kind": attribute.StringValue("fenced"),
				"quorumlock.outcome":   attribute.StringValue(tc.outcome),
				"quorumlock.attempts":  attribute.IntValue(4),
			} {
				if got, ok := attr(s, key); !ok || got != want {
					t.Errorf("span attribute %s = %v (present %v), want %v", key, got.String(), ok, want.String())
				}
			}
			if s.Status().Code != tc.status {
				t.Errorf("span status %v, want %v", s.Status().Code, tc.status)
			}
			if want := 0; tc.err != nil {
				want = 1
				if n := len(s.Events()); n != want || s.Events()[0].Name != "exception" {
					t.Errorf("span events %v, want one exception", s.Events())
				}
			} else if n := len(s.Events()); n != want {
				t.Errorf("span events %v, want none", s.Events())
			}
		})
	}
}

// A release records the hold time by outcome, and its span covers the hold.
func TestReleaseHold(t *testing.T) {
	obs, r := newObserver(t)
	obs.Release(redlock.ReleaseEvent{Key: "a", Kind: "lock", Held: 2 * time.Second})
	obs.Release(redlock.ReleaseEvent{Key: "b", Kind: "lock", Held: time.Second})
	obs.Release(redlock.ReleaseEvent{Key: "c", Kind: "write", Held: 250 * time.Millisecond, Err: fmt.Errorf("unlock: %w", redlock.ErrLockLost)})

	wantPoints(t, r.points(t), map[string]point{
		"quorumlock.hold.duration{quorumlock.lock.kind=lock,quorumlock.outcome=released}": {Count: 2, Sum: 3},
		"quorumlock.hold.duration{quorumlock.lock.kind=write,quorumlock.outcome=lost}":    {Count: 1, Sum: 0.25},
	})
	ended := r.spans.Ended()
	if len(ended) != 3 {
		t.Fatalf("%d spans, want 3", len(ended))
	}
	for i, want := range []struct {
		held   time.Duration
		status codes.Code
	}{{2 * time.Second, codes.Unset}, {time.Second, codes.Unset}, {250 * time.Millisecond, codes.Error}} {
		s := ended[i]
		if s.Name() != "quorumlock.hold" || s.EndTime().Sub(s.StartTime()) != want.held || s.Status().Code != want.status {
			t.Errorf("span %d: %s lasting %v with status %v, want quorumlock.hold lasting %v with status %v",
				i, s.Name(), s.EndTime().Sub(s.StartTime()), s.Status().Code, want.held, want.status)
		}
	}
}

// Renewals are counted by outcome and by whether the auto-renewal made
// them, and make no spans.
func TestRenewCounted(t *testing.T) {
	obs, r := newObserver(t)
	until := time.Now().Add(time.Minute)
	obs.Renew(redlock.RenewEvent{Key: "a", Kind: "lock", Auto: true, Until: until})
	obs.Renew(redlock.RenewEvent{Key: "b", Kind: "lock", Auto: true, Until: until})
	obs.Renew(redlock.RenewEvent{Key: "a", Kind: "lock", Until: until})
	obs.Renew(redlock.RenewEvent{Key: "a", Kind: "reentrant", Auto: true, Err: &redlock.QuorumError{Op: "extend", Nodes: 3, Quorum: 2, Refused: 3}})
	obs.Renew(redlock.RenewEvent{Key: "a", Kind: "lock", Auto: true, Err: &redlock.QuorumError{Op: "extend", Nodes: 3, Quorum: 2, Failed: 2, Granted: 1}})

	wantPoints(t, r.points(t), map[string]point{
		"quorumlock.renewals{quorumlock.lock.kind=lock,quorumlock.outcome=renewed,quorumlock.renewal.auto=true}":     {Sum: 2},
		"quorumlock.renewals{quorumlock.lock.kind=lock,quorumlock.outcome=renewed,quorumlock.renewal.auto=false}":    {Sum: 1},
		"quorumlock.renewals{quorumlock.lock.kind=reentrant,quorumlock.outcome=lost,quorumlock.renewal.auto=true}":   {Sum: 1},
		"quorumlock.renewals{quorumlock.lock.kind=lock,quorumlock.outcome=unavailable,quorumlock.renewal.auto=true}": {Sum: 1},
	})
	if n := len(r.spans.Ended()); n != 0 {
		t.Errorf("%d spans, want none for renewals", n)
	}
}

// A loss is counted by kind and makes a zero-length error span carrying
// its cause.
func TestLost(t *testing.T) {
	obs, r := newObserver(t)
	cause := fmt.Errorf("renewal: %w", redlock.ErrLockLost)
	obs.Lost(redlock.LostEvent{Key: "job", Kind: "read", Cause: cause})

	wantPoints(t, r.points(t), map[string]point{
		"quorumlock.losses{quorumlock.lock.kind=read}": {Sum: 1},
	})
	s := onlySpan(t, r, "quorumlock.lost")
	if !s.EndTime().Equal(s.StartTime()) {
		t.Errorf("span lasts %v, want zero", s.EndTime().Sub(s.StartTime()))
	}
	if s.Status().Code != codes.Error || s.Status().Description != cause.Error() {
		t.Errorf("span status %+v, want Error %q", s.Status(), cause)
	}
	if key, _ := attr(s, "quorumlock.lock.key"); key.AsString() != "job" {
		t.Errorf("span key %q, want job", key.AsString())
	}
	ev := s.Events()
	if len(ev) != 1 || ev[0].Name != "exception" {
		t.Fatalf("span events %v, want one exception", ev)
	}
	var msg string
	for _, kv := range ev[0].Attributes {
		if kv.Key == "exception.message" {
			msg = kv.Value.AsString()
		}
	}
	if msg != cause.Error() {
		t.Errorf("exception message %q, want %q", msg, cause)
	}
}

// A master's failed call is counted by op, master and error type, and
// makes no span: a storm of them (a Lock waiting on a dead master) must not
// flood the trace.
func TestNodeError(t *testing.T) {
	obs, r := newObserver(t)
	obs.NodeError(redlock.NodeErrorEvent{Op: "lock", Addr: "10.0.0.1:6379", Err: context.DeadlineExceeded})
	obs.NodeError(redlock.NodeErrorEvent{Op: "lock", Addr: "10.0.0.1:6379", Err: fmt.Errorf("read: %w", os.ErrDeadlineExceeded)})
	obs.NodeError(redlock.NodeErrorEvent{Op: "lock", Addr: "10.0.0.1:6379", Err: quorum.ErrNoAnswer})
	obs.NodeError(redlock.NodeErrorEvent{Op: "release", Addr: "10.0.0.2:6379", Err: context.Canceled})
	obs.NodeError(redlock.NodeErrorEvent{Op: "extend", Addr: "10.0.0.2:6379", Err: errors.New("ERR unknown command")})
	for range 1000 {
		obs.NodeError(redlock.NodeErrorEvent{Op: "guard", Addr: "10.0.0.3:6379", Err: errors.New("connection refused")})
	}

	const prefix = "quorumlock.node.errors{error.type="
	wantPoints(t, r.points(t), map[string]point{
		prefix + "timeout,quorumlock.node.address=10.0.0.1:6379,quorumlock.node.op=lock}":     {Sum: 3},
		prefix + "canceled,quorumlock.node.address=10.0.0.2:6379,quorumlock.node.op=release}": {Sum: 1},
		prefix + "error,quorumlock.node.address=10.0.0.2:6379,quorumlock.node.op=extend}":     {Sum: 1},
		prefix + "error,quorumlock.node.address=10.0.0.3:6379,quorumlock.node.op=guard}":      {Sum: 1000},
	})
	if ended := r.spans.Ended(); len(ended) != 0 {
		t.Errorf("%d spans (the first %q), want none for failed calls", len(ended), ended[0].Name())
	}
}

// The Observer is a NodeStateObserver, and a master's outage makes two
// zero-length spans: quorumlock.node_down, an error carrying the failure,
// when it starts failing, and quorumlock.node_up when it answers again.
func TestNodeState(t *testing.T) {
	obs, r := newObserver(t)
	states, ok := obs.(redlock.NodeStateObserver)
	if !ok {
		t.Fatalf("%T is not a redlock.NodeStateObserver", obs)
	}
	failure := fmt.Errorf("dial tcp 10.0.0.1:6379: %w", os.ErrDeadlineExceeded)
	states.NodeState(redlock.NodeStateEvent{Addr: "10.0.0.1:6379", Err: failure})
	states.NodeState(redlock.NodeStateEvent{Addr: "10.0.0.1:6379", Up: true})

	ended := r.spans.Ended()
	if len(ended) != 2 {
		t.Fatalf("%d spans, want 2", len(ended))
	}
	for i, want := range []struct {
		name, errorType string
		status          codes.Code
		events          int
	}{
		{"quorumlock.node_down", "timeout", codes.Error, 1},
		{"quorumlock.node_up", "", codes.Unset, 0},
	} {
		s := ended[i]
		if s.Name() != want.name || s.Status().Code != want.status || len(s.Events()) != want.events {
			t.Errorf("span %d: %s, status %v, %d events; want %s, status %v, %d events",
				i, s.Name(), s.Status().Code, len(s.Events()), want.name, want.status, want.events)
		}
		if !s.EndTime().Equal(s.StartTime()) {
			t.Errorf("span %s lasts %v, want zero", s.Name(), s.EndTime().Sub(s.StartTime()))
		}
		if s.Parent().IsValid() {
			t.Errorf("span %s has parent %v, want a root span", s.Name(), s.Parent())
		}
		if addr, _ := attr(s, "quorumlock.node.address"); addr.AsString() != "10.0.0.1:6379" {
			t.Errorf("span %s: address %q, want 10.0.0.1:6379", s.Name(), addr.AsString())
		}
		if et, _ := attr(s, "error.type"); et.AsString() != want.errorType {
			t.Errorf("span %s: error.type %q, want %q", s.Name(), et.AsString(), want.errorType)
		}
	}
	if d := ended[0].Status().Description; d != failure.Error() {
		t.Errorf("node_down status %q, want the failure %q", d, failure)
	}
	if ps := r.points(t); len(ps) != 0 {
		t.Errorf("metrics %v, want none: failed calls are counted by NodeError", keys(ps))
	}
}

// Metrics carry the key only with WithKeyAttribute; spans always do.
func TestKeyAttribute(t *testing.T) {
	for _, withKey := range []bool{false, true} {
		t.Run(fmt.Sprint("withKey=", withKey), func(t *testing.T) {
			var opts []otel.Option
			if withKey {
				opts = append(opts, otel.WithKeyAttribute())
			}
			obs, r := newObserver(t, opts...)
			obs.Acquire(redlock.AcquireEvent{Key: "k1", Kind: "lock", Attempts: 1})
			obs.Release(redlock.ReleaseEvent{Key: "k1", Kind: "lock", Held: time.Second})
			obs.Renew(redlock.RenewEvent{Key: "k1", Kind: "lock"})
			obs.Lost(redlock.LostEvent{Key: "k1", Kind: "lock", Cause: redlock.ErrLockLost})

			attrs := func(rest string) string {
				if withKey {
					return "{quorumlock.lock.key=k1," + rest + "}"
				}
				return "{" + rest + "}"
			}
			wantPoints(t, r.points(t), map[string]point{
				"quorumlock.acquisitions" + attrs("quorumlock.lock.kind=lock,quorumlock.outcome=acquired"):                          {Sum: 1},
				"quorumlock.acquire.duration" + attrs("quorumlock.lock.kind=lock,quorumlock.outcome=acquired"):                      {Count: 1},
				"quorumlock.hold.duration" + attrs("quorumlock.lock.kind=lock,quorumlock.outcome=released"):                         {Count: 1, Sum: 1},
				"quorumlock.renewals" + attrs("quorumlock.lock.kind=lock,quorumlock.outcome=renewed,quorumlock.renewal.auto=false"): {Sum: 1},
				"quorumlock.losses" + attrs("quorumlock.lock.kind=lock"):                                                            {Sum: 1},
			})
			ended := r.spans.Ended()
			if len(ended) != 3 {
				t.Fatalf("%d spans, want 3 (acquire, hold, lost)", len(ended))
			}
			for _, s := range ended {
				if key, _ := attr(s, "quorumlock.lock.key"); key.AsString() != "k1" {
					t.Errorf("span %s: key %q, want k1", s.Name(), key.AsString())
				}
			}
		})
	}
}

// The Observer is safe for concurrent use: no count is lost.
func TestConcurrentUse(t *testing.T) {
	obs, r := newObserver(t)
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				obs.Acquire(redlock.AcquireEvent{Key: "k", Kind: "lock", Wait: time.Millisecond, Attempts: 1})
				obs.NodeError(redlock.NodeErrorEvent{Op: "lock", Addr: "m:1", Err: errors.New("x")})
			}
		})
	}
	wg.Wait()
	ps := r.points(t)
	if p := ps["quorumlock.acquire.duration{quorumlock.lock.kind=lock,quorumlock.outcome=acquired}"]; p.Count != goroutines*each {
		t.Errorf("acquire.duration count %d, want %d", p.Count, goroutines*each)
	}
	delete(ps, "quorumlock.acquire.duration{quorumlock.lock.kind=lock,quorumlock.outcome=acquired}")
	wantPoints(t, ps, map[string]point{
		"quorumlock.acquisitions{quorumlock.lock.kind=lock,quorumlock.outcome=acquired}":               {Sum: goroutines * each},
		"quorumlock.node.errors{error.type=error,quorumlock.node.address=m:1,quorumlock.node.op=lock}": {Sum: goroutines * each},
	})
	if n := len(r.spans.Ended()); n != goroutines*each {
		t.Errorf("%d spans, want %d: one per acquisition, none per failed call", n, goroutines*each)
	}
}

// The attempts of each acquisition are recorded: contention shows as
// acquisitions of more than one round.
func TestAttemptsHistogram(t *testing.T) {
	obs, r := newObserver(t)
	obs.Acquire(redlock.AcquireEvent{Key: "k", Kind: redlock.KindLock, Wait: time.Millisecond, Attempts: 1})
	obs.Acquire(redlock.AcquireEvent{Key: "k", Kind: redlock.KindLock, Wait: time.Millisecond, Attempts: 5})
	obs.Acquire(redlock.AcquireEvent{Key: "k", Kind: redlock.KindLock, Err: redlock.ErrInvalid}) // sent nothing: no attempt
	wantPoints(t, r.attemptPoints(t), map[string]point{
		"quorumlock.acquire.attempts{quorumlock.lock.kind=lock,quorumlock.outcome=acquired}": {Count: 2, Sum: 6},
	})
}
