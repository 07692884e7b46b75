package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

func TestRWReadersShareWriterExcludes(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			l := newLocker(t, asNodes(nodes), redlock.Config{})
			rw := l.RWMutex("doc")
			ctx := t.Context()

			var readers []*redlock.Lock
			for range 3 {
				r, err := rw.TryRLock(ctx, 10*time.Second)
				if err != nil {
					t.Fatalf("readers must share: %v", err)
				}
				readers = append(readers, r)
			}
			if _, err := rw.TryLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
				t.Fatalf("writer with readers in: %v, want ErrNotAcquired", err)
			}
			for _, r := range readers {
				if err := r.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
			}
			w, err := rw.TryLock(ctx, 10*time.Second)
			if err != nil {
				t.Fatalf("writer after the readers left: %v", err)
			}
			if _, err := rw.TryRLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
				t.Fatalf("reader while a writer holds: %v, want ErrNotAcquired", err)
			}
			if _, err := rw.TryLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
				t.Fatalf("second writer: %v, want ErrNotAcquired", err)
			}
			if err := w.Extend(ctx, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			if err := w.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			r, err := rw.TryRLock(ctx, 10*time.Second)
			if err != nil {
				t.Fatalf("reader after the writer left: %v", err)
			}
			if err := r.Extend(ctx, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			r.Unlock(ctx)

			// Every key of the lock sits under the "{doc}" hash tag.
			for _, node := range nodes {
				keys, err := redis.Strings(node.Do(ctx, "KEYS", "*"))
				if err != nil {
					t.Fatal(err)
				}
				for _, k := range keys {
					if !strings.HasPrefix(k, "{doc}:") && k != layout.Registry("") { // the restart guard's record is the master's
						t.Fatalf("key %q is outside the lock's hash tag", k)
					}
				}
			}
		})
	}
}

// A reader that never unlocks stops counting once its own TTL ran out.
func TestRWExpiredReaderDoesNotBlock(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 20 * time.Millisecond})
	rw := l.RWMutex("doc")
	long, err := rw.TryRLock(t.Context(), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	short, err := rw.TryRLock(t.Context(), 150*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	long.Unlock(t.Context()) // only the short reader remains, and it is never unlocked
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	w, err := rw.Lock(ctx, time.Second)
	if err != nil {
		t.Fatalf("writer blocked by an expired reader: %v", err)
	}
	if time.Now().Before(short.Until()) {
		t.Fatal("writer got the lock while the reader was valid")
	}
	w.Unlock(t.Context())
}

// A waiting writer keeps new readers out, so a stream of readers cannot
// starve it; it gets the lock when the readers inside have left.
func TestRWWriterPreference(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	rw := l.RWMutex("doc")
	ctx := t.Context()
	r1, err := rw.TryRLock(ctx, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan *redlock.Lock, 1)
	go func() {
		w, err := rw.Lock(ctx, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- w
	}()
	await(t, "the writer's announcement on a quorum", func() bool { return countKey(t, nodes, "{doc}:wq") >= 2 })
	if _, err := rw.TryRLock(ctx, 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("a new reader got in ahead of the waiting writer: %v", err)
	}
	r1.Unlock(ctx)
	w := <-got
	if w == nil {
		t.FailNow()
	}
	w.Unlock(ctx)
	await(t, "the announcement gone once the writer unlocked", func() bool { return countKey(t, nodes, "{doc}:wq") == 0 })
	if _, err := rw.TryRLock(ctx, 10*time.Second); err != nil {
		t.Fatalf("reader after the writer: %v", err)
	}
}

// A writer that gives up withdraws its announcement.
func TestRWWriterGivingUpLetsReadersIn(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{})
	rw := l.RWMutex("doc")
	if _, err := rw.TryRLock(t.Context(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.TryLock(t.Context(), 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Fatalf("writer: %v, want ErrNotAcquired", err)
	}
	await(t, "the announcement withdrawn", func() bool { return countKey(t, nodes, "{doc}:wq") == 0 })
	if _, err := rw.TryRLock(t.Context(), 10*time.Second); err != nil {
		t.Fatalf("reader after the writer gave up: %v", err)
	}
}

func countKey(t *testing.T, nodes []*pool.Node, key string) int {
	t.Helper()
	c := 0
	for _, n := range nodes {
		if ok, err := redis.Bool(n.Do(t.Context(), "EXISTS", key)); err != nil {
			t.Fatal(err)
		} else if ok {
			c++
		}
	}
	return c
}

// subscribeStall is a pool.Node whose Subscribe succeeds only once the
// subscribing call's context ended: a Lock whose context ends while it
// subscribes (on a slow master) is told "try again" by its wait.
type subscribeStall struct {
	*pool.Node
	started chan struct{} // closed at the first Subscribe of any of them
	once    *sync.Once
}

// Abilities are the pool.Node's, with Subscribe stalled.
func (s *subscribeStall) Abilities() redlock.Abilities {
	a := s.Node.Abilities()
	a.Subscribe = s.Subscribe
	return a
}

func (s *subscribeStall) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (func(), error) {
	unsub, err := s.Node.Subscribe(context.WithoutCancel(ctx), channel, ch)
	s.once.Do(func() { close(s.started) })
	<-ctx.Done()
	return unsub, err
}

// A writer whose Lock gives up between attempts, after its wait said "try
// again" but before the next attempt sent anything (its context ended while
// it subscribed to release announcements), still withdraws its waiting
// mark from every master: readers are not kept out for the writer's TTL.
// Before, the withdrawal waited for acks of an attempt that was never sent,
// and {key}:wq stayed for the whole TTL.
func TestRWWriterGivingUpBetweenAttemptsWithdraws(t *testing.T) {
	_, nodes := cluster(t, 3)
	started, once := make(chan struct{}), &sync.Once{}
	stalls := make([]redlock.Node, len(nodes))
	for i, n := range nodes {
		stalls[i] = &subscribeStall{Node: n, started: started, once: once}
	}
	l := newLocker(t, stalls, redlock.Config{})
	rw := l.RWMutex("doc")
	r, err := rw.RLock(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := rw.Lock(ctx, time.Minute)
		done <- err
	}()
	<-started // the first attempt announced the writer; the wait subscribes
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("writer Lock: %v, want context.Canceled", err)
	}
	await(t, "the announcement withdrawn", func() bool { return countKey(t, nodes, "{doc}:wq") == 0 })
	r2, err := rw.TryRLock(t.Context(), time.Minute)
	if err != nil {
		t.Fatalf("a reader after the writer gave up: %v", err)
	}
	r2.Unlock(t.Context())
	r.Unlock(t.Context())
}
