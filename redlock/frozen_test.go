package redlock_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/redlock"
)

// processWaiter is the goroutine that reaps a redis-server test process.
var processWaiter = goleak.IgnoreAnyFunction("github.com/quorumlock/quorumlock/internal/redisproc.(*Server).Start.func1")

// inflight wraps a node and tells whether a call is in progress on it.
type inflight struct {
	redlock.Node
	n atomic.Int32
}

func (f *inflight) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	f.n.Add(1)
	defer f.n.Add(-1)
	return f.Node.Do(ctx, cmd, args...)
}

func (f *inflight) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	f.n.Add(1)
	defer f.n.Add(-1)
	return f.Node.Eval(ctx, hash, src, keys, args...)
}

// On real masters, with one of five SIGSTOPped, TryLock and Unlock
// return while the frozen node's call is still in flight, that is, without
// waiting for the node timeout.
func TestFrozenNodeDoesNotDelay(t *testing.T) {
	servers, nodes := cluster(t, 5)
	wrapped := make([]*inflight, len(nodes))
	for i, n := range nodes {
		wrapped[i] = &inflight{Node: n}
	}
	l := newLocker(t, asNodes(wrapped), redlock.Config{NodeTimeout: 30 * time.Second})
	if err := servers[4].Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { servers[4].Resume() })
	for i := range 3 {
		lk, err := l.TryLock(t.Context(), fmt.Sprint("k", i), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if wrapped[4].n.Load() == 0 {
			t.Fatal("TryLock waited for the frozen node")
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		if wrapped[4].n.Load() == 0 {
			t.Fatal("Unlock waited for the frozen node")
		}
	}
	servers[4].Resume()
	await(t, "the frozen node's calls to finish after resume", func() bool { return wrapped[4].n.Load() == 0 })
	for i := range 3 { // the deletes landed on the resumed node as well
		awaitValues(t, nodes, fmt.Sprint("k", i), repeat("", 5)...)
	}
}

// Lock/unlock cycles with a frozen node leave no goroutine behind once
// the node timeout has passed.
func TestNoGoroutineLeakWithFrozenNode(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), processWaiter)
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 250 * time.Millisecond})
	warm(t, l, nodes, 5*time.Second) // with every master up: a fresh deployment with one down waits the TTL at its first lock
	if err := servers[2].Pause(); err != nil {
		t.Fatal(err)
	}
	defer servers[2].Resume()
	for i := range 20 {
		lk, err := l.TryLock(t.Context(), fmt.Sprint("k", i), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// Lock with a context that ends while the lock is held elsewhere.
	held, err := l.TryLock(t.Context(), "held", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if _, err := l.Lock(ctx, "held", 5*time.Second); err == nil {
		t.Fatal("Lock of a held key succeeded")
	}
	held.Unlock(t.Context())
	for _, n := range nodes {
		n.Close()
	}
}

// A frozen master is visible through Config.OnNodeError while locks keep
// succeeding on the others.
func TestOnNodeErrorReportsFrozenNode(t *testing.T) {
	servers, nodes := cluster(t, 3)
	var mu sync.Mutex
	seen := map[string]int{}
	l := newLocker(t, asNodes(nodes), redlock.Config{
		NodeTimeout: 100 * time.Millisecond,
		OnNodeError: func(op, addr string, err error) {
			mu.Lock()
			defer mu.Unlock()
			seen[op+" "+addr]++
		},
	})
	warm(t, l, nodes, 5*time.Second) // the restart guard reads the records with every master up
	if err := servers[2].Pause(); err != nil {
		t.Fatal(err)
	}
	defer servers[2].Resume()
	lk, err := l.TryLock(t.Context(), "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	frozen := servers[2].Addr()
	await(t, "lock and unlock errors reported for the frozen master", func() bool {
		mu.Lock()
		defer mu.Unlock()
		// The unlock's release is sent again after it failed, and may fail
		// again (retry.go); the restart guard's reads, if a round ran while
		// the master was frozen, are reported too.
		delete(seen, "guard "+frozen)
		return seen["lock "+frozen] == 1 && seen["unlock "+frozen] >= 1 && len(seen) == 2
	})
}
