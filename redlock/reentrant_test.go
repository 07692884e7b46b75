package redlock_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// holds reads owner's hold count on every node ("" where there is none):
// the number of hold fields of the hash whose "owner" is owner.
func holds(t *testing.T, nodes []*pool.Node, key, owner string) string {
	t.Helper()
	var out []string
	for _, n := range nodes {
		fields, err := redis.StringMap(n.Do(t.Context(), "HGETALL", key))
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for f := range fields {
			if strings.HasPrefix(f, "h:") {
				count++
			}
		}
		v := ""
		if fields["owner"] == owner && count > 0 {
			v = strconv.Itoa(count)
		}
		out = append(out, v)
	}
	return fmt.Sprint(out)
}

func TestReentrant(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			l := newLocker(t, asNodes(nodes), redlock.Config{})
			a, b := l.Reentrant("res", "owner-a"), l.Reentrant("res", "owner-b")
			ctx := t.Context()

			outer, err := a.TryLock(ctx, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			inner, err := a.TryLock(ctx, 10*time.Second)
			if err != nil {
				t.Fatalf("the same owner could not lock again: %v", err)
			}
			await(t, "hold count 2 everywhere", func() bool { return holds(t, nodes, "res", "owner-a") == fmt.Sprint(repeat("2", n)) })
			if _, err := b.TryLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
				t.Fatalf("another owner: %v, want ErrNotAcquired", err)
			}

			// A renewal (Extend) keeps the count.
			if err := inner.Extend(ctx, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			if got := holds(t, nodes, "res", "owner-a"); got != fmt.Sprint(repeat("2", n)) {
				t.Fatalf("after Extend: holds %s", got)
			}

			if err := inner.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			await(t, "hold count 1 everywhere", func() bool { return holds(t, nodes, "res", "owner-a") == fmt.Sprint(repeat("1", n)) })
			if _, err := b.TryLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
				t.Fatalf("another owner after one of two unlocks: %v, want ErrNotAcquired", err)
			}
			if err := outer.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			await(t, "the hash gone everywhere", func() bool { return countKey(t, nodes, "res") == 0 })
			lb, err := b.TryLock(ctx, 10*time.Second)
			if err != nil {
				t.Fatalf("another owner after the last unlock: %v", err)
			}
			lb.Unlock(ctx)
		})
	}
}

// Two owners, each taking nested holds in random depths, never hold the
// lock at the same time, and both make progress.
func TestReentrantInterleavings(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{Retry: redlock.ExponentialBackoff{Base: time.Millisecond, Max: 8 * time.Millisecond}})
	var inside atomic.Value // owner inside, or ""
	inside.Store("")
	var wg sync.WaitGroup
	var rounds [2]atomic.Int32
	for o := range 2 {
		owner := "owner-" + strconv.Itoa(o)
		r := l.Reentrant("shared", owner)
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(o), 9))
			for range 15 {
				depth := 1 + rng.IntN(3)
				var held []*redlock.Lock
				for d := range depth {
					lk, err := r.Lock(t.Context(), 5*time.Second)
					if err != nil {
						t.Error(err)
						return
					}
					held = append(held, lk)
					if d == 0 && !inside.CompareAndSwap("", owner) {
						t.Errorf("%s got the lock while %v was inside", owner, inside.Load())
					}
					if got := inside.Load(); got != owner {
						t.Errorf("%s at depth %d, but %v is inside", owner, d, got)
					}
				}
				inside.Store("")
				for i := len(held) - 1; i >= 0; i-- { // innermost first
					if err := held[i].Unlock(t.Context()); err != nil {
						t.Error(err)
					}
				}
				rounds[o].Add(1)
			}
		})
	}
	wg.Wait()
	if rounds[0].Load() != 15 || rounds[1].Load() != 15 {
		t.Fatalf("rounds done: %d and %d, want 15 each", rounds[0].Load(), rounds[1].Load())
	}
}

func TestReentrantBadInput(t *testing.T) {
	_, nodes := cluster(t, 1)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	for _, r := range []*redlock.Reentrant{l.Reentrant("k", ""), l.Reentrant("", "o")} {
		if _, err := r.TryLock(t.Context(), time.Second); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("TryLock = %v, want ErrInvalid", err)
		}
		if _, err := r.Lock(t.Context(), time.Second); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("Lock = %v, want ErrInvalid", err)
		}
	}
	if totalCalls(sp) != 0 {
		t.Fatal("bad input reached Redis")
	}
}

// Defect 5 of issue 8: an inner hold with a short TTL, extended by hand or
// renewed, never shortens the owner's outer hold on the masters; after the
// inner Unlock the outer hold still keeps other owners out until its Until.
func TestInnerHoldNeverShortensOuter(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 100 * time.Millisecond})
	renewing := newLocker(t, asNodes(nodes), redlock.Config{AutoRenew: true, NodeTimeout: 100 * time.Millisecond})
	a := l.Reentrant("res", "owner-a")
	outer, err := a.TryLock(t.Context(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := a.TryLock(t.Context(), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Extend(t.Context(), 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	checkUntilEnforced(t, outer, nodes, 2)
	renewed, err := renewing.Reentrant("res", "owner-a").TryLock(t.Context(), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	first := renewed.Until()
	await(t, "a renewal of the inner hold", func() bool { return renewed.Until().After(first) })
	checkUntilEnforced(t, outer, nodes, 2)
	if err := inner.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := renewed.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	checkUntilEnforced(t, outer, nodes, 2)
	if _, err := l.Reentrant("res", "owner-b").TryLock(t.Context(), time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("another owner while the outer hold is valid: %v, want ErrNotAcquired", err)
	}
	if err := outer.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A late Unlock of a hold that expired never counts down the same owner's
// newer hold: job-42 holds the lock, stalls past its TTL, and the retried
// job, under the same owner id, acquires afresh. The stalled hold's Unlock
// must fail (its hold is gone), and leave the new hold in place: another
// owner stays refused. Before holds had ids of their own, that Unlock
// returned nil and deleted the new hold's hash.
func TestReentrantStaleUnlockLeavesNewerHold(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	ctx := t.Context()
	job := l.Reentrant("job", "job-42")
	stalled, err := job.TryLock(ctx, 600*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	await(t, "the stalled hold expired everywhere", func() bool { return countKey(t, nodes, "job") == 0 })
	retried, err := job.TryLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatalf("the retried job: %v", err)
	}
	if err := stalled.Unlock(ctx); !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("the stalled hold's late Unlock: %v, want ErrLockLost", err)
	}
	if got := holds(t, nodes, "job", "job-42"); got != fmt.Sprint(repeat("1", 3)) {
		t.Fatalf("after the late Unlock: holds %s, want the retried job's hold everywhere", got)
	}
	if _, err := l.Reentrant("job", "other").TryLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("another owner while the retried job holds: %v, want ErrNotAcquired", err)
	}
	if err := retried.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	await(t, "the hash gone everywhere", func() bool { return countKey(t, nodes, "job") == 0 })
}

// Unlocking one *Lock twice counts down one hold, not two.
func TestReentrantDoubleUnlockCountsOnce(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	ctx := t.Context()
	m := l.Reentrant("twice", "o")
	outer, err := m.TryLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := m.TryLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := inner.Unlock(ctx); !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("a second Unlock of the same hold: %v, want ErrLockLost", err)
	}
	await(t, "one hold left everywhere", func() bool { return holds(t, nodes, "twice", "o") == fmt.Sprint(repeat("1", 3)) })
	if _, err := l.Reentrant("twice", "p").TryLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("another owner while the outer hold remains: %v", err)
	}
	outer.Unlock(ctx)
}
