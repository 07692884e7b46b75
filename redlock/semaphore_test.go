package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/redlock"
)

// permitKey is the key of permit i of the semaphore key (without a hash
// tag of its own).
func permitKey(key string, i int) string { return fmt.Sprintf("{%s}:permit:%d", key, i) }

// K holders at once, each on its own permit; the K+1th is refused; after an
// Unlock the next one gets the permit that was released.
func TestSemaphoreAtMostK(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	const k = 3
	sem := l.Semaphore("sem", k)
	held := map[int]*redlock.Lock{}
	for range k {
		lk, err := sem.TryAcquire(t.Context(), time.Minute)
		if err != nil {
			t.Fatalf("holder %d of %d: %v", len(held)+1, k, err)
		}
		p := lk.Permit()
		if p < 0 || p >= k || held[p] != nil {
			t.Fatalf("permit %d: out of range or given twice", p)
		}
		if lk.Key() != "sem" {
			t.Fatalf("Key = %q, want the semaphore's key", lk.Key())
		}
		held[p] = lk
		awaitValues(t, nodes, permitKey("sem", p), repeat(lk.Token(), len(nodes))...)
	}
	_, err := sem.TryAcquire(t.Context(), time.Minute)
	var qerr *redlock.QuorumError
	if !errors.Is(err, redlock.ErrNotAcquired) || !errors.As(err, &qerr) || qerr.Refused == 0 {
		t.Fatalf("holder %d of %d: %v, want refused (ErrNotAcquired)", k+1, k, err)
	}
	if err := held[1].Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	lk, err := sem.TryAcquire(t.Context(), time.Minute)
	if err != nil {
		t.Fatalf("after an Unlock: %v", err)
	}
	if lk.Permit() != 1 {
		t.Fatalf("got permit %d, want the released permit 1", lk.Permit())
	}
	// A plain lock is no semaphore's.
	plain, err := l.TryLock(t.Context(), "plain", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Permit() != -1 {
		t.Fatalf("plain lock's Permit = %d, want -1", plain.Permit())
	}
}

// A permit is an ordinary lock: Extend, Unlock, Err.
func TestSemaphorePermitIsALock(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	lk, err := l.Semaphore("ext", 2).TryAcquire(t.Context(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Extend(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	key := permitKey("ext", lk.Permit())
	for _, n := range nodes {
		await(t, "the longer TTL on "+n.Addr(), func() bool {
			ms, err := redis.Int64(n.Do(t.Context(), "PTTL", key))
			return err == nil && ms > 2000
		})
	}
	if err := lk.Err(); err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	awaitValues(t, nodes, key, repeat("", len(nodes))...)
	if !errors.Is(lk.Err(), context.Canceled) {
		t.Fatalf("Err after Unlock = %v", lk.Err())
	}
}

// Acquire waits for a permit and gets the one that is released.
func TestSemaphoreAcquireWaitsForRelease(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	sem := l.Semaphore("wait", 2)
	a, b := tryAcquire(t, sem), tryAcquire(t, sem)
	type result struct {
		lk  *redlock.Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		lk, err := sem.Acquire(t.Context(), time.Minute)
		got <- result{lk, err}
	}()
	if err := a.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.lk.Permit() != a.Permit() || r.lk.Permit() == b.Permit() {
		t.Fatalf("waiter got permit %d; released %d, still held %d", r.lk.Permit(), a.Permit(), b.Permit())
	}

	// A waiter whose context ends gives up with the context's error.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := sem.Acquire(ctx, time.Minute)
	if !errors.Is(err, redlock.ErrNotAcquired) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire on a full semaphore until ctx ended: %v", err)
	}
}

// Goroutines that acquire, hold and release never number more than K
// holders at once: each counts itself in after Acquire returns and out
// before Unlock.
func TestSemaphoreConcurrentNeverMoreThanK(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	other := newLocker(t, asNodes(nodes), redlock.Config{}) // a second process
	const k, workers, rounds = 2, 6, 10
	var (
		mu            sync.Mutex
		holders, most int
		permits       = map[int]bool{}
		errs          = make(chan error, workers)
		wg            sync.WaitGroup
	)
	for w := range workers {
		locker := l
		if w%2 == 1 {
			locker = other
		}
		sem := locker.Semaphore("busy", k)
		wg.Go(func() {
			for range rounds {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				lk, err := sem.Acquire(ctx, time.Minute)
				cancel()
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				holders++
				most = max(most, holders)
				if permits[lk.Permit()] {
					errs <- fmt.Errorf("permit %d held twice", lk.Permit())
				}
				permits[lk.Permit()] = true
				mu.Unlock()
				time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond) // the work
				mu.Lock()
				holders--
				delete(permits, lk.Permit())
				mu.Unlock()
				if err := lk.Unlock(t.Context()); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if most > k {
		t.Fatalf("%d holders at once, K = %d", most, k)
	}
	t.Logf("at most %d holders at once", most)
}

// With one of three masters down, a semaphore works as a lock does: K
// holders, and the K+1th refused.
func TestSemaphoreMinorityDown(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 200 * time.Millisecond})
	warm(t, l, nodes, time.Minute) // a fresh deployment with a master down would wait the TTL at its first lock
	if err := servers[2].Stop(); err != nil {
		t.Fatal(err)
	}
	sem := l.Semaphore("minority", 2)
	for i := range 2 {
		if _, err := sem.TryAcquire(t.Context(), time.Minute); err != nil {
			t.Fatalf("holder %d: %v", i+1, err)
		}
	}
	if _, err := sem.TryAcquire(t.Context(), time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("holder 3 of 2: %v, want ErrNotAcquired", err)
	}
}

// With Config.Fencing, the next holder of a permit gets a token greater
// than every hold granted before it began.
func TestSemaphoreFencing(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	sem := l.Semaphore("fenced", 2)
	a, b := tryAcquire(t, sem), tryAcquire(t, sem)
	if a.Fence() == 0 || b.Fence() <= a.Fence() {
		t.Fatalf("tokens %d then %d, want increasing from 1", a.Fence(), b.Fence())
	}
	if err := a.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := tryAcquire(t, sem)
	if c.Permit() != a.Permit() || c.Fence() <= b.Fence() {
		t.Fatalf("permit %d token %d after tokens %d (permit %d) and %d", c.Permit(), c.Fence(), a.Fence(), a.Permit(), b.Fence())
	}
}

// Bad input is refused with ErrInvalid before anything is sent.
func TestSemaphoreBadInput(t *testing.T) {
	_, nodes := cluster(t, 3)
	sp := spies(nodes)
	l := newLocker(t, asNodes(sp), redlock.Config{})
	var nilCtx context.Context
	calls := []struct {
		name string
		call func() error
	}{
		{"zero permits", func() error { _, err := l.Semaphore("s", 0).TryAcquire(t.Context(), time.Second); return err }},
		{"negative permits", func() error { _, err := l.Semaphore("s", -1).Acquire(t.Context(), time.Second); return err }},
		{"too many permits", func() error {
			_, err := l.Semaphore("s", redlock.MaxPermits+1).TryAcquire(t.Context(), time.Second)
			return err
		}},
		{"empty key", func() error { _, err := l.Semaphore("", 2).Acquire(t.Context(), time.Second); return err }},
		{"key whose permits cannot share its slot", func() error {
			_, err := l.Semaphore("a}b", 2).TryAcquire(t.Context(), time.Second)
			return err
		}},
		{"zero ttl", func() error { _, err := l.Semaphore("s", 2).TryAcquire(t.Context(), 0); return err }},
		{"ttl within the node timeout", func() error {
			_, err := l.Semaphore("s", 2).Acquire(t.Context(), 100*time.Millisecond)
			return err
		}},
		{"nil ctx", func() error { _, err := l.Semaphore("s", 2).TryAcquire(nilCtx, time.Second); return err }},
		{"nil ctx, Acquire", func() error { _, err := l.Semaphore("s", 2).Acquire(nilCtx, time.Second); return err }},
	}
	for _, c := range calls {
		if err := c.call(); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", c.name, err)
		}
	}
	if got := totalCalls(sp); got != 0 {
		t.Fatalf("bad input sent %d commands to Redis", got)
	}
	// The bounds themselves are fine.
	for _, k := range []int{1, redlock.MaxPermits} {
		lk, err := l.Semaphore(fmt.Sprint("bounds", k), k).TryAcquire(t.Context(), time.Minute)
		if err != nil {
			t.Fatalf("K = %d: %v", k, err)
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// Every key of a semaphore shares its key's hash slot, with a hash tag of
// its own or without.
func TestSemaphoreKeysShareTheSlot(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{Fencing: true})
	for _, key := range []string{"jobs", "{user:1}:jobs", "a{b"} {
		lk, err := l.Semaphore(key, 4).TryAcquire(t.Context(), time.Minute)
		if err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		want := fmt.Sprintf("{%s}:permit:%d", key, lk.Permit())
		if key == "{user:1}:jobs" {
			want = fmt.Sprintf("%s:permit:%d", key, lk.Permit())
		}
		if keySlot(want) != keySlot(key) {
			t.Fatalf("%q: permit key %q in slot %d, the key in %d", key, want, keySlot(want), keySlot(key))
		}
		awaitValues(t, nodes, want, repeat(lk.Token(), len(nodes))...)
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// An Observer hears of a semaphore's acquisitions by their kind.
func TestSemaphoreObserved(t *testing.T) {
	_, nodes := cluster(t, 3)
	o := &kindLog{}
	l := newLocker(t, asNodes(nodes), redlock.Config{Observer: o})
	sem := l.Semaphore("seen", 1)
	lk, err := sem.TryAcquire(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sem.TryAcquire(t.Context(), time.Minute); err == nil {
		t.Fatal("second holder of one permit")
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if fmt.Sprint(o.seen) != "[acquire semaphore 1 ok acquire semaphore 1 failed release semaphore]" {
		t.Fatalf("observed %v", o.seen)
	}
}

// kindLog records the kind of each acquisition and release it is told of.
type kindLog struct {
	redlock.NopObserver
	mu   sync.Mutex
	seen []string
}

func (o *kindLog) Acquire(e redlock.AcquireEvent) {
	outcome := "ok"
	if e.Err != nil {
		outcome = "failed"
	}
	o.mu.Lock()
	o.seen = append(o.seen, fmt.Sprintf("acquire %s %d %s", e.Kind, e.Attempts, outcome))
	o.mu.Unlock()
}

func (o *kindLog) Release(e redlock.ReleaseEvent) {
	o.mu.Lock()
	o.seen = append(o.seen, "release "+e.Kind)
	o.mu.Unlock()
}

// On a real Cluster shard a fenced semaphore works for keys whose permits
// and counter share the key's slot, and refuses the others without
// traffic, not with CROSSSLOT.
func TestSemaphoreClusterShard(t *testing.T) {
	n := clusterShard(t)
	sp := &spy{Node: n}
	l := newLocker(t, []redlock.Node{sp}, redlock.Config{Fencing: true})
	for _, key := range []string{"a}b", "{}x", "}{"} {
		before := sp.calls.Load()
		if _, err := l.Semaphore(key, 2).TryAcquire(t.Context(), time.Minute); !errors.Is(err, redlock.ErrInvalid) {
			t.Errorf("%q on a Cluster shard: %v, want ErrInvalid", key, err)
		}
		if sp.calls.Load() != before {
			t.Errorf("%q: refused key sent commands", key)
		}
	}
	for _, key := range []string{"plain", "{tag}x", "a{b", "{"} {
		lk, err := l.Semaphore(key, 2).TryAcquire(t.Context(), time.Minute)
		if err != nil {
			t.Fatalf("%q on a Cluster shard: %v", key, err)
		}
		if err := lk.Extend(t.Context(), time.Minute); err != nil {
			t.Fatalf("%q: Extend: %v", key, err)
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatalf("%q: Unlock: %v", key, err)
		}
	}
}

// Every permit key shares its semaphore key's hash slot, or the key is
// refused: exhaustive over short strings of braces.
func TestPermitKeysShareTheSlot(t *testing.T) {
	for _, key := range braceKeys(7) {
		if redlock.CheckDerivable(key) != nil {
			continue // refused before any traffic (TestDerivedKeysShareTheSlot)
		}
		for _, i := range []int{0, 1, redlock.MaxPermits - 1} {
			if d := redlock.PermitKey(key, i); keySlot(d) != keySlot(key) || hashedPart(d) != hashedPart(key) {
				t.Fatalf("key %q (slot %d) has permit key %q (slot %d)", key, keySlot(key), d, keySlot(d))
			}
		}
	}
}

// tryAcquire takes a permit of sem for a minute, failing the test if it
// cannot.
func tryAcquire(t *testing.T, sem *redlock.Semaphore) *redlock.Lock {
	t.Helper()
	lk, err := sem.TryAcquire(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	return lk
}
