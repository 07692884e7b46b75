package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Two candidates: the second waits in Campaign until the first resigns,
// then leads in a greater term; Leader and an observer follow, in term
// order, a proclaimed value included.
func TestElectionHandsOver(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	ctx := t.Context()
	a, err := redlock.NewElection(l, "leader", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := redlock.NewElection(l, "leader", 5*time.Second)
	watcher, _ := redlock.NewElection(l, "leader", 5*time.Second)
	if _, err := watcher.Leader(ctx); !errors.Is(err, redlock.ErrNotHeld) {
		t.Fatalf("Leader before any campaign: %v, want ErrNotHeld", err)
	}
	if err := a.Campaign(ctx, "a:1"); err != nil {
		t.Fatal(err)
	}
	first := a.Term()
	if first <= 0 || a.Context().Err() != nil {
		t.Fatalf("leader a: term %d, context %v", first, a.Context().Err())
	}
	if err := a.Campaign(ctx, "again"); !errors.Is(err, redlock.ErrInvalid) {
		t.Fatalf("Campaign while leading: %v, want ErrInvalid", err)
	}
	octx, stop := context.WithCancel(ctx)
	defer stop()
	seen := watcher.Observe(octx)
	if got := <-seen; got.Term != first || got.Value != "a:1" {
		t.Fatalf("observed %+v, want term %d value a:1", got, first)
	}
	if err := a.Proclaim(ctx, "a:2"); err != nil {
		t.Fatal(err)
	}
	if got := <-seen; got.Term != first || got.Value != "a:2" {
		t.Fatalf("observed %+v after Proclaim, want term %d value a:2", got, first)
	}
	if err := b.Proclaim(ctx, "b"); !errors.Is(err, redlock.ErrNotLeader) {
		t.Fatalf("Proclaim by a candidate that does not lead: %v, want ErrNotLeader", err)
	}
	won := make(chan error, 1)
	go func() { won <- b.Campaign(ctx, "b:1") }()
	select {
	case err := <-won:
		t.Fatalf("b's Campaign returned (%v) while a leads", err)
	default:
	}
	actx := a.Context()
	if err := a.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if actx.Err() == nil || a.Term() != 0 {
		t.Fatalf("after Resign: a's context %v, term %d", actx.Err(), a.Term())
	}
	if err := <-won; err != nil {
		t.Fatal(err)
	}
	if b.Term() <= first {
		t.Fatalf("b's term %d is not above a's %d", b.Term(), first)
	}
	if got := <-seen; got.Term != b.Term() || got.Value != "b:1" {
		t.Fatalf("observed %+v, want term %d value b:1", got, b.Term())
	}
	ldr, err := watcher.Leader(ctx)
	if err != nil || ldr.Term != b.Term() || ldr.Value != "b:1" || ldr.TTL <= 0 {
		t.Fatalf("Leader = %+v, %v; want b's term %d", ldr, err, b.Term())
	}
	if err := b.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	stop()
	for range seen { // closes once its context ended
	}
}

// A leader whose lock is lost (here: deleted behind its back) sees its
// Context end, and Proclaim then fails with ErrNotLeader.
func TestElectionLeadershipLost(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	ctx := t.Context()
	e, _ := redlock.NewElection(l, "lost", time.Second)
	if err := e.Campaign(ctx, "v"); err != nil {
		t.Fatal(err)
	}
	lctx := e.Context()
	for _, n := range nodes {
		if _, err := n.Do(ctx, "DEL", "lost"); err != nil {
			t.Fatal(err)
		}
	}
	<-lctx.Done()
	if cause := context.Cause(lctx); !errors.Is(cause, redlock.ErrLockLost) {
		t.Fatalf("leadership context ended with %v, want ErrLockLost", cause)
	}
	if err := e.Proclaim(ctx, "w"); !errors.Is(err, redlock.ErrNotLeader) {
		t.Fatalf("Proclaim after the loss: %v, want ErrNotLeader", err)
	}
	_ = e.Resign(ctx)
}

// Bad input is refused, with nothing sent.
func TestElectionBadInput(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	if _, err := redlock.NewElection(l, "", time.Second); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("empty name: %v", err)
	}
	if _, err := redlock.NewElection(l, "e", 0); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("zero ttl: %v", err)
	}
	if _, err := redlock.NewElection(&redlock.Locker{}, "e", time.Second); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("zero Locker: %v", err)
	}
	e, _ := redlock.NewElection(l, "e", time.Second)
	if err := e.Campaign(t.Context(), string(make([]byte, redlock.MaxMetadataLen+1))); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("oversized value: %v", err)
	}
	if err := e.Resign(t.Context()); err != nil {
		t.Errorf("Resign without leading: %v", err)
	}
	if e.Context().Err() == nil {
		t.Error("Context of a candidate that does not lead has not ended")
	}
	for _, s := range sp {
		if n := s.calls.Load(); n != 0 {
			t.Fatalf("%s got %d calls for bad input", s.Addr(), n)
		}
	}
}

// A value too long for the leader's record (with its term) is refused
// before the lock is taken: no term is used up, nobody is woken.
func TestElectionValueTooLong(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	e, _ := redlock.NewElection(l, "long", time.Second)
	// Fits WithMetadata alone, not with the term and revision beside it.
	value := string(make([]byte, redlock.MaxLeaderValueLen+1))
	if err := e.Campaign(t.Context(), value); !errors.Is(err, redlock.ErrInvalid) {
		t.Fatalf("Campaign with a value that leaves no room for the term: %v, want ErrInvalid", err)
	}
	for _, s := range sp {
		if n := s.calls.Load(); n != 0 {
			t.Fatalf("%s got %d calls for a value too long", s.Addr(), n)
		}
	}
	longest := string(make([]byte, redlock.MaxLeaderValueLen))
	if err := e.Campaign(t.Context(), longest); err != nil {
		t.Fatalf("Campaign with a value of MaxLeaderValueLen: %v", err)
	}
	if err := e.Proclaim(t.Context(), longest); err != nil {
		t.Fatalf("Proclaim with a value of MaxLeaderValueLen: %v", err)
	}
	if err := e.Resign(t.Context()); err != nil {
		t.Fatal(err)
	}
}
