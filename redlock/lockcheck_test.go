package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Every kind's Check reports how long a quorum still holds the lock, and
// leaves the lock as it was; after Unlock it reads lost.
func TestLockCheckEveryKind(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	fl := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	const ttl = 20 * time.Second
	kinds := []struct {
		name string
		lock func(ctx context.Context) (*redlock.Lock, error)
	}{
		{"plain", func(ctx context.Context) (*redlock.Lock, error) { return l.Lock(ctx, "plain", ttl) }},
		{"fenced", func(ctx context.Context) (*redlock.Lock, error) { return fl.Lock(ctx, "fenced", ttl) }},
		{"reentrant", func(ctx context.Context) (*redlock.Lock, error) {
			return l.Reentrant("reentrant", "owner").Lock(ctx, ttl)
		}},
		{"read", func(ctx context.Context) (*redlock.Lock, error) { return l.RWMutex("rw-read").RLock(ctx, ttl) }},
		{"write", func(ctx context.Context) (*redlock.Lock, error) { return l.RWMutex("rw-write").Lock(ctx, ttl) }},
		{"fair", func(ctx context.Context) (*redlock.Lock, error) { return l.Fair("fair").Lock(ctx, ttl) }},
		{"semaphore", func(ctx context.Context) (*redlock.Lock, error) { return l.Semaphore("sem", 2).Acquire(ctx, ttl) }},
		{"multi", func(ctx context.Context) (*redlock.Lock, error) {
			return l.LockMulti(ctx, []string{"{m}:a", "{m}:b"}, ttl)
		}},
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			lk, err := k.lock(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			until := lk.Until()
			first, err := lk.Check(t.Context())
			if err != nil {
				t.Fatalf("Check of a held lock: %v", err)
			}
			if first <= ttl/2 || first > ttl {
				t.Fatalf("Check = %v, want within (%v, %v]: the lock was just granted", first, ttl/2, ttl)
			}
			if !lk.Until().Equal(until) {
				t.Errorf("Until moved from %v to %v", until, lk.Until())
			}
			if err := lk.Unlock(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := lk.Check(t.Context()); !errors.Is(err, redlock.ErrLockLost) {
				t.Errorf("Check after Unlock: %v, want ErrLockLost", err)
			}
		})
	}
}

// A lock whose key a quorum no longer holds (gone, then taken by another
// client) reads as lost, not unavailable; the lock's own state stays as
// it was.
func TestLockCheckLost(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	lk, err := l.Lock(t.Context(), "k", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if _, err := n.Do(t.Context(), "DEL", "k"); err != nil {
			t.Fatal(err)
		}
	}
	other, err := newLocker(t, asNodes(nodes), redlock.Config{}).Lock(t.Context(), "k", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Unlock(context.Background())
	_, err = lk.Check(t.Context())
	var qerr *redlock.QuorumError
	if !errors.Is(err, redlock.ErrLockLost) || errors.Is(err, redlock.ErrUnavailable) || !errors.As(err, &qerr) {
		t.Fatalf("Check of a lock another client holds: %v, want ErrLockLost, not ErrUnavailable, a *QuorumError", err)
	}
	if qerr.Op != "check" || qerr.Refused < 2 {
		t.Errorf("QuorumError %+v, want Op check and a quorum refused", qerr)
	}
	select {
	case <-lk.Done():
		t.Error("Check ended the lock: it only reports")
	default:
	}
}

// With too few masters answering, Check reads unavailable.
func TestLockCheckUnavailable(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 100 * time.Millisecond})
	lk, err := l.Lock(t.Context(), "k", 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers[:2] {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lk.Check(t.Context()); !errors.Is(err, redlock.ErrLockLost) || !errors.Is(err, redlock.ErrUnavailable) {
		t.Fatalf("Check with two of three masters down: %v, want ErrLockLost and ErrUnavailable", err)
	}
}
