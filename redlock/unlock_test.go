package redlock_test

import (
	"context"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Defect 6 of issue 8: Unlock with a context that has already ended still
// sends its releases (bounded by the node timeout); the key is gone on every
// master and another client gets the lock at once.
func TestUnlockWithEndedContextReleases(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	other := newLocker(t, asNodes(nodes), redlock.Config{})
	for _, kind := range []string{"plain", "reentrant", "writer"} {
		var lk *redlock.Lock
		var err error
		switch kind {
		case "plain":
			lk, err = l.TryLock(t.Context(), "k", time.Minute)
		case "reentrant":
			lk, err = l.Reentrant("k-r", "o").TryLock(t.Context(), time.Minute)
		case "writer":
			lk, err = l.RWMutex("k-w").TryLock(t.Context(), time.Minute)
		}
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		lk.Unlock(ctx) // may report the ended context; the releases go out anyway
		switch kind {
		case "plain":
			awaitValues(t, nodes, "k", repeat("", 3)...)
			lk2, err := other.TryLock(t.Context(), "k", time.Minute)
			if err != nil {
				t.Fatalf("after Unlock with an ended context: %v", err)
			}
			lk2.Unlock(t.Context())
		case "reentrant":
			await(t, "the hash gone everywhere", func() bool { return countKey(t, nodes, "k-r") == 0 })
			if _, err := other.Reentrant("k-r", "other").TryLock(t.Context(), time.Minute); err != nil {
				t.Fatalf("after Unlock with an ended context: %v", err)
			}
		case "writer":
			await(t, "the writer key gone everywhere", func() bool { return countKey(t, nodes, "{k-w}:w") == 0 })
			if _, err := other.RWMutex("k-w").TryLock(t.Context(), time.Minute); err != nil {
				t.Fatalf("after Unlock with an ended context: %v", err)
			}
		}
	}
}
