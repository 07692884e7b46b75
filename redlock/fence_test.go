package redlock_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

func TestFenceKeySharesTheSlot(t *testing.T) {
	for key, want := range map[string]string{
		"invoice:42":    "{invoice:42}:fence",
		"{user:7}:cart": "{user:7}:cart:fence",
		"{}odd":         "{{}odd}:fence",
	} {
		if got := redlock.FenceKey(key); got != want {
			t.Errorf("FenceKey(%q) = %q, want %q", key, got, want)
		}
	}
}

// Fencing tokens increase strictly across successive holders, whichever
// quorum of the masters each holder gets.
func TestFenceIncreasesAcrossQuorums(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			l := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
			rng := rand.New(rand.NewPCG(1, uint64(n)))
			var last int64
			for round := range 40 {
				// A random minority refuses this round: its masters
				// hold the key for someone else.
				blocked := rng.Perm(n)[:rng.IntN(n/2+1)]
				for _, i := range blocked {
					nodes[i].Do(t.Context(), "SET", "res", "blocker", "PX", 60000)
				}
				// Lock, not TryLock: the previous round's Unlock may have
				// returned at the quorum with a release still waiting for
				// its late SET on the last master.
				ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
				lk, err := l.Lock(ctx, "res", 10*time.Second)
				cancel()
				if err != nil {
					t.Fatalf("round %d (blocked %v): %v", round, blocked, err)
				}
				if lk.Fence() <= last {
					t.Fatalf("round %d (blocked %v): fence %d after %d", round, blocked, lk.Fence(), last)
				}
				last = lk.Fence()
				if err := lk.Unlock(t.Context()); err != nil {
					t.Fatal(err)
				}
				for _, i := range blocked {
					nodes[i].Do(t.Context(), "DEL", "res")
				}
				await(t, "the key released everywhere", func() bool {
					for _, v := range values(t, nodes, "res") {
						if v != "" {
							return false
						}
					}
					return true
				})
			}
		})
	}
}

// With AOF, masters killed and restarted (and one down during an
// acquisition) do not break the order of fencing tokens.
func TestFenceSurvivesKillsWithAOF(t *testing.T) {
	servers := redistest.Start(t, 5, redisproc.Options{AppendOnly: true})
	nodes := make([]*pool.Node, len(servers))
	for i, s := range servers {
		nodes[i] = pool.New(pool.Config{Addr: s.Addr()})
		t.Cleanup(func() { nodes[i].Close() })
	}
	l := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	// Every master registered while all are up: a master first met after
	// a restart, without a record, would be held back for the TTL (the
	// restart guard cannot tell it from one that lost its data).
	warm(t, l, nodes, 10*time.Second)
	rng := rand.New(rand.NewPCG(7, 7))
	var last int64
	for round := range 15 {
		down := rng.IntN(5)
		if err := servers[down].Kill(); err != nil {
			t.Fatal(err)
		}
		lk, err := l.TryLock(t.Context(), "res", 10*time.Second)
		if err != nil {
			t.Fatalf("round %d, node %d down: %v", round, down, err)
		}
		if lk.Fence() <= last {
			t.Fatalf("round %d: fence %d after %d", round, lk.Fence(), last)
		}
		last = lk.Fence()
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		if err := servers[down].Start(); err != nil {
			t.Fatal(err)
		}
		// A restarted master comes back with its counter from the AOF.
		restarted := pool.New(pool.Config{Addr: servers[down].Addr()})
		if v, err := restarted.Do(context.Background(), "GET", "{res}:fence"); err != nil || (round > 0 && v == nil) {
			t.Fatalf("fence counter after restart: %v, %v", v, err)
		}
		restarted.Close()
	}
}

func TestFenceIsZeroWithoutFencing(t *testing.T) {
	_, nodes := cluster(t, 1)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	lk, err := l.TryLock(t.Context(), "res", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock(t.Context())
	if lk.Fence() != 0 {
		t.Fatalf("Fence = %d without Config.Fencing", lk.Fence())
	}
	if v := get(t, nodes[0], "{res}:fence"); v != "" {
		t.Fatalf("a fencing counter was written without Config.Fencing: %q", v)
	}
}

// Defect 9 of issue 8: with Config.Fencing, writers of a read-write lock and
// reentrant holds carry fencing tokens too. Tokens never decrease across
// holders of a key and increase strictly from one owner (or writer) to the
// next; an owner's nested holds keep a token no lower than its first.
func TestFencingCoversWritersAndReentrantHolds(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	var last int64
	for round := range 5 {
		w, err := l.RWMutex("rw").TryLock(t.Context(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if w.Fence() <= last {
			t.Fatalf("round %d: writer fence %d after %d", round, w.Fence(), last)
		}
		last = w.Fence()
		if err := w.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		await(t, "the writer gone everywhere", func() bool { return countKey(t, nodes, "{rw}:w") == 0 })
	}

	last = 0
	for round := range 5 {
		r := l.Reentrant("re", fmt.Sprint("owner-", round))
		outer, err := r.TryLock(t.Context(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if outer.Fence() <= last {
			t.Fatalf("round %d: owner's fence %d after the previous owner's %d", round, outer.Fence(), last)
		}
		inner, err := r.TryLock(t.Context(), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if inner.Fence() < outer.Fence() {
			t.Fatalf("round %d: nested hold's fence %d below the outer's %d", round, inner.Fence(), outer.Fence())
		}
		last = max(outer.Fence(), inner.Fence())
		for _, lk := range []*redlock.Lock{inner, outer} {
			if err := lk.Unlock(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		await(t, "the hash gone everywhere", func() bool { return countKey(t, nodes, "re") == 0 })
	}
}

// Without persistence, masters restarted empty lose their fencing
// counters; every fenced acquire raises the counter to at least the
// master's clock in microseconds, so the next token is still above every
// one issued before (issue 23 item 2; on a968683 it started again from 1).
func TestFenceIncreasesAcrossRestartsWithoutPersistence(t *testing.T) {
	servers := redistest.Start(t, 3, redisproc.Options{})
	nodes := make([]*pool.Node, len(servers))
	for i, s := range servers {
		nodes[i] = pool.New(pool.Config{Addr: s.Addr()})
		t.Cleanup(func() { nodes[i].Close() })
	}
	// The guard is off: this is about the counters, not about the locks
	// a restarted master forgot.
	l := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true, RestartGuard: -1})
	var last int64
	for round := range 3 {
		lk, err := l.TryLock(t.Context(), "res", 10*time.Second)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if lk.Fence() <= last {
			t.Fatalf("round %d, every master restarted empty: fence %d after %d", round, lk.Fence(), last)
		}
		last = lk.Fence()
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, s := range servers {
			if err := s.Restart(0); err != nil {
				t.Fatal(err)
			}
		}
		restarted := pool.New(pool.Config{Addr: servers[0].Addr()})
		v, err := restarted.Do(t.Context(), "GET", "{res}:fence")
		restarted.Close()
		if err != nil || v != nil {
			t.Fatalf("fence counter after a restart without persistence: %v, %v; want none", v, err)
		}
	}
}

// A nested hold's token is no lower than its owner's first hold's also
// where the masters lost the first hold's write-back (a failover to a
// replica that had not received it, a restart): each counter is seeded
// from its master's clock, as an acquisition's is, not read as it is.
func TestNestedFenceAfterLostWriteBack(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	r := l.Reentrant("lost-wb", "owner")
	outer, err := r.TryLock(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer outer.Unlock(t.Context())
	for _, n := range nodes { // every master back at an older counter
		if _, err := n.Do(t.Context(), "SET", "{lost-wb}:fence", 1); err != nil {
			t.Fatal(err)
		}
	}
	inner, err := r.TryLock(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Unlock(t.Context())
	if inner.Fence() < outer.Fence() {
		t.Fatalf("nested hold's fence %d below the outer's %d after the write-back was lost", inner.Fence(), outer.Fence())
	}
}
