package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// never is a retry strategy that does not poll in any useful time: only a
// release announcement can wake the waiter.
var never = redlock.RetryFunc(func(int) time.Duration { return time.Hour })

// A waiter is woken by the release announcement, not by polling.
func TestWakeOnRelease(t *testing.T) {
	for _, n := range sizes {
		t.Run(fmt.Sprintf("nodes=%d", n), func(t *testing.T) {
			_, nodes := cluster(t, n)
			l := newLocker(t, asNodes(nodes), redlock.Config{Retry: never})
			held, err := l.TryLock(t.Context(), "k", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			got := make(chan error, 1)
			go func() {
				lk, err := l.Lock(ctx, "k", time.Minute)
				if err == nil {
					lk.Unlock(context.Background())
				}
				got <- err
			}()
			await(t, "the waiter subscribed on every master", func() bool {
				for _, node := range nodes {
					reply, _ := node.Do(t.Context(), "PUBSUB", "NUMSUB", redlock.ReleaseChannel("k"))
					if r, ok := reply.([]any); !ok || r[1].(int64) == 0 {
						return false
					}
				}
				return true
			})
			if err := held.Unlock(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := <-got; err != nil {
				t.Fatalf("the waiter was not woken by the release: %v", err)
			}
		})
	}
}

// Masters that cannot announce releases leave polling to do the work.
func TestPollingWithoutAnnouncements(t *testing.T) {
	_, nodes := cluster(t, 3)
	plain := asNodes(spies(nodes)) // a spy hides pool.Node's Subscribe
	l := newLocker(t, plain, redlock.Config{Retry: redlock.ExponentialBackoff{Base: time.Millisecond, Max: 10 * time.Millisecond}})
	held, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(50*time.Millisecond, func() { held.Unlock(context.Background()) })
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	lk, err := l.Lock(ctx, "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	lk.Unlock(t.Context())
}

// Waiting writers are woken when the last reader leaves.
func TestWakeWriterOnLastReader(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{Retry: never})
	rw := l.RWMutex("doc")
	r, err := rw.TryRLock(t.Context(), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	got := make(chan error, 1)
	go func() {
		w, err := rw.Lock(ctx, time.Minute)
		if err == nil {
			w.Unlock(context.Background())
		}
		got <- err
	}()
	await(t, "the writer's announcement", func() bool { return countKey(t, nodes, "{doc}:wq") >= 2 })
	await(t, "the writer subscribed", func() bool {
		reply, _ := nodes[0].Do(t.Context(), "PUBSUB", "NUMSUB", redlock.ReleaseChannel("doc"))
		r, ok := reply.([]any)
		return ok && r[1].(int64) > 0
	})
	r.Unlock(t.Context())
	if err := <-got; err != nil {
		t.Fatalf("the writer was not woken by the last reader: %v", err)
	}
}

// The clean-up of a failed attempt announces nothing (a waiter would wake
// itself); a real Unlock does.
func TestOnlyUnlockAnnounces(t *testing.T) {
	_, nodes := cluster(t, 3)
	for _, node := range nodes[:2] { // someone else holds a majority
		if _, err := node.Do(t.Context(), "SET", "k", "other", "PX", 60000); err != nil {
			t.Fatal(err)
		}
	}
	// Any master may announce: under load one master's release can miss
	// the node timeout, so every master is listened to.
	heard := make(chan struct{}, 10)
	for _, node := range nodes {
		unsub, err := node.Subscribe(t.Context(), redlock.ReleaseChannel("k"), heard)
		if err != nil {
			t.Fatal(err)
		}
		defer unsub()
	}
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: time.Second})
	if _, err := l.TryLock(t.Context(), "k", time.Minute); err == nil {
		t.Fatal("TryLock of a held key succeeded")
	}
	awaitValues(t, nodes, "k", "other", "other", "") // node 2 granted, then was released
	for _, node := range nodes[:2] {
		node.Do(t.Context(), "DEL", "k")
	}
	lk, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(heard) != 0 {
		t.Fatal("the release of a failed attempt was announced")
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-heard:
	case <-time.After(10 * time.Second):
		t.Fatal("Unlock was not announced")
	}
}

// With DisableWakeOnRelease a waiting Lock never subscribes: when it first
// backs off, no master has a subscriber on the key's release channel; with
// wake on release it has subscribed on every master by then.
func TestDisableWakeOnRelease(t *testing.T) {
	for _, disable := range []bool{false, true} {
		t.Run(fmt.Sprintf("disable=%v", disable), func(t *testing.T) {
			_, nodes := cluster(t, 3)
			holder := newLocker(t, asNodes(nodes), redlock.Config{})
			held, err := holder.TryLock(t.Context(), "k", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Unlock(context.Background())
			backingOff := make(chan struct{}, 1)
			l := newLocker(t, asNodes(nodes), redlock.Config{
				DisableWakeOnRelease: disable,
				Retry: redlock.RetryFunc(func(int) time.Duration {
					select {
					case backingOff <- struct{}{}:
					default:
					}
					return time.Hour
				}),
			})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			got := make(chan error, 1)
			go func() {
				_, err := l.Lock(ctx, "k", time.Minute)
				got <- err
			}()
			<-backingOff
			for _, node := range nodes {
				reply, err := node.Do(t.Context(), "PUBSUB", "NUMSUB", redlock.ReleaseChannel("k"))
				if err != nil {
					t.Fatal(err)
				}
				subscribed := reply.([]any)[1].(int64) > 0
				if subscribed == disable {
					t.Errorf("%s: subscribed = %v with DisableWakeOnRelease %v", node.Addr(), subscribed, disable)
				}
			}
			cancel()
			if err := <-got; !errors.Is(err, context.Canceled) {
				t.Fatalf("Lock = %v, want context.Canceled", err)
			}
		})
	}
}
