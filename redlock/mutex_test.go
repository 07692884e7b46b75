package redlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Mutexes of two Lockers (two processes, as the masters see them) and
// goroutines of each exclude one another, as sync.Mutex users expect.
func TestMutexExcludes(t *testing.T) {
	_, nodes := cluster(t, 3)
	mutexes := []sync.Locker{
		newLocker(t, asNodes(nodes), redlock.Config{}).Mutex("m", 5*time.Second),
		newLocker(t, asNodes(nodes), redlock.Config{}).Mutex("m", 5*time.Second),
	}
	var inside, most, total atomic.Int64
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			m := mutexes[g%2]
			for range 5 {
				m.Lock()
				n := inside.Add(1)
				for cur := most.Load(); n > cur && !most.CompareAndSwap(cur, n); cur = most.Load() {
				}
				total.Add(1)
				inside.Add(-1)
				m.Unlock()
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 || total.Load() != 20 {
		t.Fatalf("at most %d inside at once, %d sections; want 1 and 20", most.Load(), total.Load())
	}
	for _, n := range nodes {
		if v := get(t, n, "m"); v != "" {
			t.Errorf("%s still holds the key: %q", n.Addr(), v)
		}
	}
}

// A Mutex held past its TTL is renewed, so another client cannot take it.
func TestMutexRenews(t *testing.T) {
	_, nodes := cluster(t, 3)
	m := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 100 * time.Millisecond}).Mutex("m", 400*time.Millisecond)
	m.Lock()
	first := m.Held().Until()
	await(t, "a renewal past the first TTL", func() bool { return m.Held().Until().After(first.Add(400 * time.Millisecond)) })
	if _, err := newLocker(t, asNodes(nodes), redlock.Config{}).TryLock(t.Context(), "m", time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Errorf("TryLock of a renewed Mutex's key: %v, want ErrNotAcquired", err)
	}
	m.Unlock()
	if err := m.Err(); err != nil {
		t.Errorf("Err after a clean Unlock: %v", err)
	}
}

// A hold lost while held is what Err reports after Unlock.
func TestMutexLostWhileHeld(t *testing.T) {
	_, nodes := cluster(t, 3)
	m := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 100 * time.Millisecond}).Mutex("m", 400*time.Millisecond)
	m.Lock()
	lk := m.Held()
	for _, n := range nodes {
		if _, err := n.Do(t.Context(), "DEL", "m"); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-lk.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the loss was not noticed")
	}
	m.Unlock()
	if err := m.Err(); !errors.Is(err, redlock.ErrLockLost) {
		t.Errorf("Err after a loss: %v, want ErrLockLost", err)
	}
}

// Misuse panics, as sync.Mutex's does: Unlock while unlocked, and Lock
// where the Locker cannot lock at all.
func TestMutexMisuse(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	mustPanic := func(what string, f func(), want error) {
		t.Helper()
		defer func() {
			t.Helper()
			r := recover()
			if r == nil {
				t.Errorf("%s: no panic", what)
				return
			}
			if err, _ := r.(error); want != nil && !errors.Is(err, want) {
				t.Errorf("%s: panic %v, want one matching %v", what, r, want)
			}
		}()
		f()
	}
	mustPanic("Unlock of an unlocked Mutex", l.Mutex("m", time.Second).Unlock, nil)
	mustPanic("Lock with a zero TTL", l.Mutex("m", 0).Lock, redlock.ErrInvalid)
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustPanic("Lock on a closed Locker", l.Mutex("m", time.Second).Lock, redlock.ErrClosed)
}
