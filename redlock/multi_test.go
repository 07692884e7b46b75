package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// A multi-key lock takes every key or none: while a plain lock holds one of
// them nothing is set; once it is free every key holds the one token on
// every master, a plain lock of any of them is refused, and Extend and
// Unlock act on all of them.
func TestLockMultiAllOrNone(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	other := newLocker(t, asNodes(nodes), redlock.Config{})
	keys := []string{"a", "b", "c"}

	b, err := other.TryLock(t.Context(), "b", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "b", repeat(b.Token(), 3)...) // TryLock may return at the quorum
	if _, err := l.TryLockMulti(t.Context(), keys, time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("TryLockMulti while b is held: %v", err)
	}
	if n := countKey(t, nodes, "a") + countKey(t, nodes, "c"); n != 0 {
		t.Fatalf("a refused multi-key lock set %d keys", n) // every master refused: nothing set, nothing to release
	}
	if err := b.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "b", repeat("", 3)...) // Unlock may return at the quorum

	lk, err := l.TryLockMulti(t.Context(), keys, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	keys[0] = "changed" // the lock keeps its own copy
	if lk.Key() != "a" || !slices.Equal(lk.Keys(), []string{"a", "b", "c"}) || lk.Fence() != 0 {
		t.Fatalf("Key %q, Keys %q, Fence %d", lk.Key(), lk.Keys(), lk.Fence())
	}
	for _, k := range lk.Keys() {
		awaitValues(t, nodes, k, repeat(lk.Token(), 3)...)
		if _, err := other.TryLock(t.Context(), k, time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
			t.Fatalf("plain TryLock of %q beside the multi-key lock: %v", k, err)
		}
	}
	if _, err := other.TryLockMulti(t.Context(), []string{"c", "d"}, time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("an overlapping multi-key lock: %v", err)
	}
	if n := countKey(t, nodes, "d"); n != 0 {
		t.Fatalf("a refused multi-key lock set d on %d masters", n)
	}
	if err := lk.Extend(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, k := range lk.Keys() {
		await(t, k+"'s PTTL above a minute on every master after Extend", func() bool {
			return slices.Min(pttls(t, nodes, k)) > 60000
		})
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, k := range lk.Keys() {
		awaitValues(t, nodes, k, repeat("", 3)...)
	}
	if err := lk.Extend(t.Context(), time.Minute); !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("Extend after Unlock: %v", err)
	}
}

// Each master grants the whole set or nothing: a master where one key is
// taken sets none of them, and a failed attempt releases the masters that
// did set them.
func TestLockMultiPerMaster(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	if _, err := nodes[0].Do(t.Context(), "SET", "y", "someone", "PX", 60000); err != nil {
		t.Fatal(err)
	}
	lk, err := l.TryLockMulti(t.Context(), []string{"x", "y"}, time.Minute)
	if err != nil {
		t.Fatalf("two of three masters free: %v", err)
	}
	awaitValues(t, nodes, "x", "", lk.Token(), lk.Token())
	awaitValues(t, nodes, "y", "someone", lk.Token(), lk.Token())
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "x", repeat("", 3)...)
	awaitValues(t, nodes, "y", "someone", "", "")

	// Two masters taken: the third grants, the attempt fails and releases
	// it, leaving the others' keys alone.
	if _, err := nodes[1].Do(t.Context(), "SET", "y", "someone", "PX", 60000); err != nil {
		t.Fatal(err)
	}
	if _, err := l.TryLockMulti(t.Context(), []string{"x", "y"}, time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("two of three masters taken: %v", err)
	}
	awaitValues(t, nodes, "x", repeat("", 3)...)
	awaitValues(t, nodes, "y", "someone", "someone", "")
}

// Two clients loop on overlapping sets {a, b} and {b, c}, and a third takes
// b alone with a plain lock: each keeps making progress (no deadlock), and
// no two of them ever hold b at once.
func TestLockMultiOverlapping(t *testing.T) {
	_, nodes := cluster(t, 3)
	const rounds = 20
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var holder atomic.Int32 // who holds b: 0 nobody
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	done := make([]atomic.Int32, 3)
	for id, keys := range [][]string{{"a", "b"}, {"b", "c"}, {"b"}} {
		l := newLocker(t, asNodes(nodes), redlock.Config{})
		wg.Go(func() {
			for range rounds {
				var lk *redlock.Lock
				var err error
				if id == 2 {
					lk, err = l.Lock(ctx, "b", 10*time.Second)
				} else {
					lk, err = l.LockMulti(ctx, keys, 10*time.Second)
				}
				if err != nil {
					errs <- fmt.Errorf("client %d %v after %d rounds: %w", id, keys, done[id].Load(), err)
					return
				}
				if other := holder.Swap(int32(id + 1)); other != 0 {
					errs <- fmt.Errorf("client %d %v holds b beside client %d", id, keys, other-1)
				}
				time.Sleep(time.Millisecond) // the work: widen the window an overlap would show in
				holder.CompareAndSwap(int32(id+1), 0)
				if err := lk.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("client %d: Unlock: %w", id, err)
					return
				}
				done[id].Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, k := range []string{"a", "b", "c"} {
		awaitValues(t, nodes, k, repeat("", 3)...)
	}
}

// Bad input is refused with ErrInvalid before any traffic; keys with
// braces of their own are the caller's and are accepted.
func TestLockMultiBadInput(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	var nilCtx context.Context
	for name, call := range map[string]func() error{
		"nil keys":      func() error { _, err := l.LockMulti(t.Context(), nil, time.Second); return err },
		"no keys":       func() error { _, err := l.TryLockMulti(t.Context(), []string{}, time.Second); return err },
		"empty key":     func() error { _, err := l.TryLockMulti(t.Context(), []string{"a", ""}, time.Second); return err },
		"duplicate key": func() error { _, err := l.LockMulti(t.Context(), []string{"a", "b", "a"}, time.Second); return err },
		"zero ttl":      func() error { _, err := l.TryLockMulti(t.Context(), []string{"a", "b"}, 0); return err },
		"ttl too short": func() error { _, err := l.LockMulti(t.Context(), []string{"a", "b"}, 40*time.Millisecond); return err },
		"nil ctx":       func() error { _, err := l.TryLockMulti(nilCtx, []string{"a", "b"}, time.Second); return err },
	} {
		if err := call(); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if n := totalCalls(sp); n != 0 {
		t.Fatalf("bad input sent %d commands to Redis", n)
	}
	lk, err := l.TryLockMulti(t.Context(), []string{"a}b", "{}x"}, time.Second)
	if err != nil {
		t.Fatalf("keys with braces: %v", err)
	}
	lk.Unlock(t.Context())
}

// On a Redis Cluster master, keys that share a hash tag lock, extend and
// unlock; keys of several slots are refused by the master (CROSSSLOT) and
// the lock is not acquired, nothing set.
func TestLockMultiClusterShard(t *testing.T) {
	n := clusterShard(t)
	l := newLocker(t, []redlock.Node{n}, redlock.Config{})
	_, err := l.TryLockMulti(t.Context(), []string{"x", "y"}, time.Minute)
	if !errors.Is(err, redlock.ErrNotAcquired) || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("keys of two slots on a Cluster master: %v, want not acquired with CROSSSLOT", err)
	}
	lk, err := l.TryLockMulti(t.Context(), []string{"{order:7}:payment", "{order:7}:stock"}, time.Minute)
	if err != nil {
		t.Fatalf("keys sharing a hash tag: %v", err)
	}
	if err := lk.Extend(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
}
