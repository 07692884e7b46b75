package redlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/faultproxy"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// slowMaster puts a proxy with latency d in front of node i's master, and
// returns a Node through it.
func slowMaster(t *testing.T, addr string, d time.Duration) *pool.Node {
	t.Helper()
	p, err := faultproxy.Start(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.SetLatency(d)
	n := pool.New(pool.Config{Addr: p.Addr()})
	t.Cleanup(func() { n.Close() })
	return n
}

// Unlock returns once a quorum answered; a process that exits right after
// it would leave the key on a slow master. Close waits for that release:
// once it returned, no master holds the key, without waiting further.
func TestCloseWaitsForReleases(t *testing.T) {
	servers, nodes := cluster(t, 3)
	slow := slowMaster(t, servers[2].Addr(), 100*time.Millisecond)
	l := newLocker(t, []redlock.Node{nodes[0], nodes[1], slow}, redlock.Config{NodeTimeout: 2 * time.Second})
	for i := range 5 {
		lk, err := l.TryLock(t.Context(), "k", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		awaitValues(t, nodes, "k", repeat(lk.Token(), 3)...)
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		if i == 4 {
			break
		}
		awaitValues(t, nodes, "k", repeat("", 3)...)
	}
	if got := get(t, nodes[2], "k"); got == "" {
		t.Fatal("the slow master's release landed before Unlock returned: the test proves nothing")
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := values(t, nodes, "k"); got[0] != "" || got[1] != "" || got[2] != "" {
		t.Fatalf("after Close: %q, want the key released everywhere", got)
	}
}

// Close stops renewals (the lock then ends at its Until), refuses later
// acquisitions and Extends with ErrClosed, and is bounded by its context;
// Unlock still works after it.
func TestCloseStopsTheLocker(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{AutoRenew: true})
	renewed, err := l.TryLock(t.Context(), "renewed", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := l.TryLock(t.Context(), "plain", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-renewed.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("a renewed lock still holds long after Close stopped its renewal")
	}
	if err := renewed.Err(); !errors.Is(err, redlock.ErrLockLost) {
		t.Errorf("the renewed lock ended with %v, want its validity passed", err)
	}
	if _, err := l.TryLock(t.Context(), "k", time.Second); !errors.Is(err, redlock.ErrClosed) || !errors.Is(err, redlock.ErrNotAcquired) {
		t.Errorf("TryLock after Close: %v, want ErrClosed and ErrNotAcquired", err)
	}
	if err := plain.Extend(t.Context(), 10*time.Second); !errors.Is(err, redlock.ErrClosed) || !errors.Is(err, redlock.ErrLockLost) {
		t.Errorf("Extend after Close: %v, want ErrClosed and ErrLockLost", err)
	}
	if err := plain.Unlock(t.Context()); err != nil {
		t.Errorf("Unlock after Close: %v", err)
	}
	awaitValues(t, nodes, "plain", repeat("", 3)...)
}

// Close is bounded by its context: a release still in flight to a master
// that answers nothing does not hold it.
func TestCloseBoundedByContext(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 5 * time.Second})
	lk, err := l.TryLock(t.Context(), "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := servers[2].Pause(); err != nil {
		t.Fatal(err)
	}
	defer servers[2].Resume()
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if err := l.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close with a release stuck on a frozen master: %v, want the context's error", err)
	}
}
