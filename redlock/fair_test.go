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

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// fairQueue names the queue of the fair lock key on the masters.
func fairQueue(key string) string { return "{" + key + "}:fair:queue" }

// registered returns the waiters registered for key on n, lowest ticket
// first.
func registered(t *testing.T, n *pool.Node, key string) []string {
	t.Helper()
	ids, err := redis.Strings(n.Do(context.Background(), "ZRANGE", fairQueue(key), 0, -1))
	if err != nil {
		t.Fatalf("ZRANGE on %s: %v", n.Addr(), err)
	}
	return ids
}

// awaitRegistered awaits want waiters registered for key on every node.
func awaitRegistered(t *testing.T, nodes []*pool.Node, key string, want int) {
	t.Helper()
	await(t, fmt.Sprintf("%d waiters registered for %s on every node", want, key), func() bool {
		for _, n := range nodes {
			if len(registered(t, n, key)) != want {
				return false
			}
		}
		return true
	})
}

// cuttable is a node that a test can cut off, as if its process crashed:
// every call fails at once, without being sent.
type cuttable struct {
	redlock.Node
	cut atomic.Bool
}

var errCutOff = errors.New("cut off")

func (c *cuttable) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	if c.cut.Load() {
		return nil, errCutOff
	}
	return c.Node.Do(ctx, cmd, args...)
}

func (c *cuttable) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	if c.cut.Load() {
		return nil, errCutOff
	}
	return c.Node.Eval(ctx, hash, src, keys, args...)
}

// crashable starts a Lock of the fair lock key through its own Locker with
// node timeout nodeTimeout, awaits its registration as waiter number nth
// on every master, then cuts that Locker off: the waiter stays registered
// and never refreshes nor withdraws. The returned function ends its Lock
// call.
func crashable(t *testing.T, nodes []*pool.Node, key string, nth int, nodeTimeout time.Duration) (end func()) {
	t.Helper()
	cuts := make([]*cuttable, len(nodes))
	for i, n := range nodes {
		cuts[i] = &cuttable{Node: n}
	}
	l := newLocker(t, asNodes(cuts), redlock.Config{NodeTimeout: nodeTimeout})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := l.Fair(key).Lock(ctx, 10*time.Second)
		done <- err
	}()
	awaitRegistered(t, nodes, key, nth)
	for _, c := range cuts {
		c.cut.Store(true)
	}
	return func() {
		cancel()
		if err := <-done; err == nil {
			t.Error("the crashed waiter got the lock")
		}
	}
}

// Waiters that arrive in a known order, each in a Locker of its own or
// sharing one, are served in that order.
func TestFairOrderOfService(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			ctx := t.Context()
			lockers := []*redlock.Locker{
				newLocker(t, asNodes(nodes), redlock.Config{}),
				newLocker(t, asNodes(nodes), redlock.Config{Fencing: true}),
				newLocker(t, asNodes(nodes), redlock.Config{}),
			}
			first, err := lockers[0].Fair("queue").TryLock(ctx, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			awaitRegistered(t, nodes, "queue", 1) // the holder's, until its Unlock

			const waiters = 6
			var (
				mu     sync.Mutex
				served []int
				wg     sync.WaitGroup
				errs   = make(chan error, waiters)
			)
			for i := range waiters {
				f := lockers[i%len(lockers)].Fair("queue")
				wg.Go(func() {
					lk, err := f.Lock(ctx, 10*time.Second)
					if err != nil {
						errs <- fmt.Errorf("waiter %d: %w", i, err)
						return
					}
					mu.Lock()
					served = append(served, i)
					mu.Unlock()
					if err := lk.Unlock(ctx); err != nil {
						errs <- fmt.Errorf("waiter %d unlock: %w", i, err)
					}
				})
				// Arrival order: the next waiter draws only once this one
				// is registered on every master.
				awaitRegistered(t, nodes, "queue", i+2)
			}
			if err := first.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if want := []int{0, 1, 2, 3, 4, 5}; !slices.Equal(served, want) {
				t.Fatalf("served in order %v, want %v", served, want)
			}
			awaitRegistered(t, nodes, "queue", 0)
		})
	}
}

// A waiter that crashed while first in line holds up the next one only
// until its registration expires on the masters.
func TestFairCrashedWaiterExpires(t *testing.T) {
	_, nodes := cluster(t, 3)
	ctx := t.Context()
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	holder, err := l.Fair("job").TryLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	awaitRegistered(t, nodes, "job", 1)
	// Registration lifetime 300ms (6 x 20ms, at least 300ms).
	end := crashable(t, nodes, "job", 2, 20*time.Millisecond)
	defer end()
	crashed := registered(t, nodes[0], "job")[1]

	// Its last expiry on each master, read once nothing refreshes it.
	expiry := make([]int64, len(nodes))
	for i, n := range nodes {
		ms, err := redis.Int64(n.Do(ctx, "ZSCORE", "{job}:fair:expiry", crashed))
		if err != nil {
			t.Fatalf("crashed waiter's expiry on %s: %v", n.Addr(), err)
		}
		expiry[i] = ms
	}

	got := make(chan *redlock.Lock, 1)
	go func() {
		lk, err := l.Fair("job").Lock(ctx, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- lk
	}()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	lk := <-got
	if lk == nil {
		t.FailNow()
	}
	defer lk.Unlock(ctx)
	// It was granted by a quorum, each only once the crashed waiter's
	// registration had expired there.
	past := 0
	for i, n := range nodes {
		now, err := redis.Int64s(n.Do(ctx, "TIME"))
		if err != nil {
			t.Fatal(err)
		}
		if now[0]*1000+now[1]/1000 >= expiry[i] {
			past++
		}
		if slices.Contains(registered(t, n, "job"), crashed) {
			t.Errorf("%s still holds the crashed waiter's registration", n.Addr())
		}
	}
	if past < l.Quorum() {
		t.Fatalf("granted while the crashed waiter's registration lived on %d of %d masters", len(nodes)-past, len(nodes))
	}
}

// TryLock gets a free lock, is refused while the lock is held or an earlier
// waiter is registered, and leaves no registration behind; every key of the
// lock shares the key's hash slot.
func TestFairTryLock(t *testing.T) {
	_, nodes := cluster(t, 3)
	ctx := t.Context()
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	f := l.Fair("doc")
	lk, err := f.TryLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "doc", repeat(lk.Token(), 3)...)
	if _, err := f.TryLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("TryLock of a held lock: %v, want ErrNotAcquired", err)
	}
	awaitRegistered(t, nodes, "doc", 1) // the holder's only

	// A waiter first in line, crashed with a registration that outlives
	// the test (6 x 5s): the free lock is still its turn, not ours.
	end := crashable(t, nodes, "doc", 2, 5*time.Second)
	defer end()
	if err := lk.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, "doc", repeat("", 3)...)
	_, err = f.TryLock(ctx, 10*time.Second)
	var qerr *redlock.QuorumError
	if !errors.As(err, &qerr) || qerr.Failed != 0 {
		t.Fatalf("TryLock behind a registered waiter: %v, want a refusal", err)
	}
	awaitRegistered(t, nodes, "doc", 1) // the crashed waiter's only

	for _, n := range nodes {
		keys, err := redis.Strings(n.Do(ctx, "KEYS", "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !slices.Contains([]string{"doc", "{doc}:fair:queue", "{doc}:fair:expiry", "{doc}:fair:ticket", layout.Registry("")}, k) && !strings.HasPrefix(k, "{doc}:tomb:") {
				t.Fatalf("key %q is outside the lock's hash slot", k)
			}
		}
		if ms, err := redis.Int64(n.Do(ctx, "PTTL", "{doc}:fair:ticket")); err != nil || ms < 0 {
			t.Fatalf("ticket counter on %s: PTTL %d, %v; want it to expire", n.Addr(), ms, err)
		}
	}
}

// Bad input is refused with ErrInvalid before anything is sent.
func TestFairBadInput(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	var nilCtx context.Context
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"empty key", func() error { _, err := l.Fair("").Lock(t.Context(), time.Second); return err }},
		{"empty key, TryLock", func() error { _, err := l.Fair("").TryLock(t.Context(), time.Second); return err }},
		{"zero ttl", func() error { _, err := l.Fair("k").Lock(t.Context(), 0); return err }},
		{"ttl within node timeout", func() error { _, err := l.Fair("k").TryLock(t.Context(), 400*time.Millisecond); return err }},
		{"nil ctx", func() error { _, err := l.Fair("k").Lock(nilCtx, time.Second); return err }},
		{"key whose queue cannot share its slot", func() error { _, err := l.Fair("a}b").Lock(t.Context(), time.Second); return err }},
	} {
		if err := c.call(); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if got := totalCalls(sp); got != 0 {
		t.Fatalf("bad input sent %d commands to Redis", got)
	}
}

// Goroutines of several Lockers taking turns never hold the lock at once,
// and with fencing each holder's token is greater than the one before.
func TestFairMutualExclusion(t *testing.T) {
	_, nodes := cluster(t, 3)
	ctx := t.Context()
	var lockers []*redlock.Locker
	for range 3 {
		lockers = append(lockers, newLocker(t, asNodes(nodes), redlock.Config{Fencing: true}))
	}
	const goroutines, rounds = 6, 8
	var (
		holders atomic.Int32
		mu      sync.Mutex
		fences  []int64
		wg      sync.WaitGroup
	)
	for g := range goroutines {
		f := lockers[g%len(lockers)].Fair("shared")
		wg.Go(func() {
			for range rounds {
				lk, err := f.Lock(ctx, 10*time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				if h := holders.Add(1); h != 1 {
					t.Errorf("%d holders at once", h)
				}
				mu.Lock()
				fences = append(fences, lk.Fence())
				mu.Unlock()
				holders.Add(-1)
				if err := lk.Unlock(ctx); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if len(fences) != goroutines*rounds {
		t.Fatalf("%d acquisitions, want %d", len(fences), goroutines*rounds)
	}
	for i := 1; i < len(fences); i++ {
		if fences[i] <= fences[i-1] {
			t.Fatalf("fence %d after %d", fences[i], fences[i-1])
		}
	}
	awaitRegistered(t, nodes, "shared", 0)
}
