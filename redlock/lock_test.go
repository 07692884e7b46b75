package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

var sizes = []int{1, 3, 5}

// A held lock refuses a second client without touching the holder's
// keys; unlock removes it everywhere; then the second client gets it.
func TestLockExcludesAndUnlockReleases(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			a := newLocker(t, asNodes(nodes), redlock.Config{})
			b := newLocker(t, asNodes(nodes), redlock.Config{})
			ctx := t.Context()

			held, err := a.TryLock(ctx, "res", 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			awaitValues(t, nodes, "res", repeat(held.Token(), n)...)

			_, err = b.TryLock(ctx, "res", 10*time.Second)
			var qerr *redlock.QuorumError
			if !errors.Is(err, redlock.ErrNotAcquired) || !errors.As(err, &qerr) || qerr.Granted != 0 {
				t.Fatalf("second client: %v, want ErrNotAcquired with 0 granted", err)
			}
			if got := values(t, nodes, "res"); fmt.Sprint(got) != fmt.Sprint(repeat(held.Token(), n)) {
				t.Fatalf("refused attempt changed the holder's keys: %q", got)
			}

			if err := held.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			awaitValues(t, nodes, "res", repeat("", n)...)

			next, err := b.TryLock(ctx, "res", 10*time.Second)
			if err != nil {
				t.Fatalf("after unlock: %v", err)
			}
			if next.Token() == held.Token() {
				t.Fatal("two acquisitions share a token")
			}
			if err := next.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An attempt that only a minority grants releases its keys everywhere.
func TestMinorityAttemptLeavesNoKeys(t *testing.T) {
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			majority := n/2 + 1
			for _, node := range nodes[:majority] {
				if _, err := node.Do(t.Context(), "SET", "res", "other", "PX", 60000); err != nil {
					t.Fatal(err)
				}
			}
			l := newLocker(t, asNodes(nodes), redlock.Config{})
			_, err := l.TryLock(t.Context(), "res", 10*time.Second)
			var qerr *redlock.QuorumError
			if !errors.As(err, &qerr) || qerr.Refused < majority-1 {
				t.Fatalf("TryLock = %v, want a refusal by the majority", err)
			}
			want := append(repeat("other", majority), repeat("", n-majority)...)
			awaitValues(t, nodes, "res", want...)
		})
	}
}

// Cancelling Lock's context ends it with an error matching
// context.Canceled, and the attempts' keys are released even though a
// node's SET was still in flight at the cancellation.
func TestLockCancelled(t *testing.T) {
	_, nodes := cluster(t, 5)
	for _, node := range nodes[:3] { // someone else holds a majority
		if _, err := node.Do(t.Context(), "SET", "res", "other", "PX", 60000); err != nil {
			t.Fatal(err)
		}
	}
	sp := spies(nodes)
	entered, proceed := make(chan struct{}), make(chan struct{})
	var held atomic.Bool       // later attempts' SETs may run beside the first
	sp[4].beforeSet = func() { // hold node 4's first SET back until after the cancel
		if held.CompareAndSwap(false, true) {
			close(entered)
			<-proceed
		}
	}
	l := newLocker(t, asNodes(sp), redlock.Config{NodeTimeout: 5 * time.Second})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := l.Lock(ctx, "res", 10*time.Second)
		done <- err
	}()
	<-entered
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("Lock after cancel = %v, want context.Canceled and ErrNotAcquired", err)
	}
	close(proceed) // node 4's SET lands now, after Lock returned
	awaitValues(t, nodes, "res", "other", "other", "other", "", "")
	if len(sp[3].setTokens()) == 0 || len(sp[4].setTokens()) == 0 {
		t.Fatal("the test did not exercise a granted SET")
	}
}

// Extend never revives a lock whose validity passed, and moves Until
// forward for a live one.
func TestExtend(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			clk := &manualClock{t: time.Unix(1e6, 0)}
			sp := spies(nodes)
			l := newLocker(t, asNodes(sp), redlock.Config{Clock: clk})
			ctx := t.Context()

			lk, err := l.TryLock(ctx, "live", 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			before := lk.Until()
			clk.advance(time.Second)
			if err := lk.Extend(ctx, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			if !lk.Until().After(before.Add(9 * time.Second)) {
				t.Fatalf("Until moved from %v to %v, want about 10s later", before, lk.Until())
			}
			await(t, "PTTL above 10s on every node", func() bool {
				for _, node := range nodes {
					if ms, _ := node.Do(ctx, "PTTL", "live"); ms.(int64) < 10000 {
						return false
					}
				}
				return true
			})

			expired, err := l.TryLock(ctx, "expired", 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			// Before counting what Extend sends:
			landedEverywhere(t, nodes, "expired")
			clk.advance(11 * time.Second) // past Until on the client's clock
			calls := totalCalls(sp)
			err = expired.Extend(ctx, 10*time.Second)
			if !errors.Is(err, redlock.ErrLockLost) {
				t.Fatalf("Extend after validity = %v, want ErrLockLost", err)
			}
			if got := totalCalls(sp) - calls; got != 0 {
				t.Fatalf("Extend after validity sent %d commands, want none", got)
			}

			// A key that is gone is not re-created by Extend.
			for _, node := range nodes {
				node.Do(ctx, "DEL", "live")
			}
			if err := lk.Extend(ctx, 10*time.Second); !errors.Is(err, redlock.ErrLockLost) {
				t.Fatalf("Extend of a deleted key = %v, want ErrLockLost", err)
			}
			awaitValues(t, nodes, "live", repeat("", n)...)
		})
	}
}

// Unlock after the lock expired and someone else took it reports the
// loss and leaves the new holder's keys alone.
func TestUnlockAfterExpiryKeepsNewHolder(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			a := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 20 * time.Millisecond})
			b := newLocker(t, asNodes(nodes), redlock.Config{})
			ctx := t.Context()
			old, err := a.TryLock(ctx, "res", 100*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			awaitValues(t, nodes, "res", repeat("", n)...) // expired on the masters
			now, err := b.TryLock(ctx, "res", 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			var qerr *redlock.QuorumError
			if err := old.Unlock(ctx); !errors.Is(err, redlock.ErrLockLost) || !errors.As(err, &qerr) || qerr.Op != "unlock" {
				t.Fatalf("Unlock of the expired lock = %v, want ErrLockLost", err)
			}
			awaitValues(t, nodes, "res", repeat(now.Token(), n)...)
		})
	}
}

// Error replies count as failures, never as grants.
func TestErrorRepliesAreFailures(t *testing.T) {
	t.Run("WRONGTYPE", func(t *testing.T) {
		_, nodes := cluster(t, 3)
		l := newLocker(t, asNodes(nodes), redlock.Config{})
		lk, err := l.TryLock(t.Context(), "res", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		awaitValues(t, nodes, "res", repeat(lk.Token(), 3)...) // TryLock may return at the quorum
		for _, node := range nodes[:2] {                       // replace our key with a hash on two nodes
			if _, err := node.Do(t.Context(), "DEL", "res"); err != nil {
				t.Fatal(err)
			}
			if _, err := node.Do(t.Context(), "HSET", "res", "f", "v"); err != nil {
				t.Fatal(err)
			}
		}
		err = lk.Extend(t.Context(), 10*time.Second)
		var qerr *redlock.QuorumError
		if !errors.As(err, &qerr) || qerr.Failed != 2 || qerr.Granted > 1 || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("Extend = %v, want 2 WRONGTYPE failures", err)
		}
		if err := lk.Unlock(t.Context()); !errors.As(err, &qerr) || qerr.Failed != 2 {
			t.Fatalf("Unlock = %v, want 2 failures", err)
		}
	})
	t.Run("NOAUTH", func(t *testing.T) {
		servers, nodes := cluster(t, 3)
		for _, s := range servers[:2] {
			admin := pool.New(pool.Config{Addr: s.Addr()})
			admin.Do(t.Context(), "CONFIG", "SET", "requirepass", "pw")
			admin.Close()
		}
		l := newLocker(t, asNodes(nodes), redlock.Config{})
		_, err := l.TryLock(t.Context(), "res", 10*time.Second)
		var qerr *redlock.QuorumError
		if !errors.As(err, &qerr) || qerr.Failed != 2 || qerr.Granted > 1 || !strings.Contains(err.Error(), "NOAUTH") {
			t.Fatalf("TryLock = %v, want 2 NOAUTH failures", err)
		}
		if qerr.NodeErrors == nil || !strings.Contains(qerr.NodeErrors.Error(), servers[0].Addr()) {
			t.Fatalf("node errors %v do not name the node", qerr.NodeErrors)
		}
	})
}

type manualClock struct{ t time.Time }

func (c *manualClock) Now() time.Time          { return c.t }
func (c *manualClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func totalCalls(sp []*spy) int64 {
	var sum int64
	for _, s := range sp {
		sum += s.calls.Load()
	}
	return sum
}
