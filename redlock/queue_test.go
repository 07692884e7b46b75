package redlock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Lock calls of one Locker that wait for the same key get it in the order
// they came, and a local Unlock hands it on without polling.
func TestLocalWaitersAreServedInOrder(t *testing.T) {
	_, nodes := cluster(t, 3)
	// No useful polling and no release announcements: only the local
	// hand-over can wake the waiters.
	l := newLocker(t, asNodes(spies(nodes)), redlock.Config{Retry: never})
	held, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range 5 {
		wg.Go(func() {
			lk, err := l.Lock(ctx, "k", time.Minute)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			lk.Unlock(context.Background())
		})
		await(t, fmt.Sprintf("waiter %d queued", i), func() bool { return l.Waiting("k") == i+1 })
	}
	held.Unlock(t.Context())
	wg.Wait()
	if fmt.Sprint(order) != "[0 1 2 3 4]" {
		t.Fatalf("served in order %v, want [0 1 2 3 4]", order)
	}
	if l.Waiting("k") != 0 {
		t.Fatal("the queue outlived its waiters")
	}
}

// A waiter whose context ends leaves the queue and the others go on.
func TestQueuedWaiterGivesUp(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	held, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	first, cancelFirst := context.WithCancel(t.Context())
	errs := make(chan error, 2)
	go func() { _, err := l.Lock(first, "k", time.Minute); errs <- err }()
	await(t, "first waiter queued", func() bool { return l.Waiting("k") == 1 })
	go func() {
		lk, err := l.Lock(t.Context(), "k", time.Minute)
		if err == nil {
			lk.Unlock(context.Background())
		}
		errs <- err
	}()
	await(t, "second waiter queued", func() bool { return l.Waiting("k") == 2 })
	cancelFirst()
	if err := <-errs; err == nil {
		t.Fatal("the cancelled waiter got the lock")
	}
	held.Unlock(t.Context())
	if err := <-errs; err != nil {
		t.Fatalf("the second waiter: %v", err)
	}
}

// A reentrant owner's nested Lock never waits behind queued waiters for
// the lock its owner holds.
func TestReentrantNestedLockSkipsTheQueue(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	a, b := l.Reentrant("k", "a"), l.Reentrant("k", "b")
	outer, err := a.Lock(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go b.Lock(waitCtx, time.Minute)
	ctx, cancelNested := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancelNested()
	inner, err := a.Lock(ctx, time.Minute)
	if err != nil {
		t.Fatalf("nested Lock with a waiter around: %v", err)
	}
	inner.Unlock(t.Context())
	outer.Unlock(t.Context())
}
