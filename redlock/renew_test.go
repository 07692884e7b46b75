package redlock_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// link is a client's connection to a master that can be cut, as a network
// partition between that client and the master would.
type link struct {
	redlock.Node
	cut *atomic.Bool
}

var errCut = errors.New("link cut")

func (l link) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	if l.cut.Load() {
		return nil, errCut
	}
	return l.Node.Do(ctx, cmd, args...)
}

func (l link) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	if l.cut.Load() {
		return nil, errCut
	}
	return l.Node.Eval(ctx, hash, src, keys, args...)
}

func links[N redlock.Node](nodes []N, cut *atomic.Bool) []redlock.Node {
	out := make([]redlock.Node, len(nodes))
	for i, n := range nodes {
		out[i] = link{Node: n, cut: cut}
	}
	return out
}

// The watchdog keeps a lock alive well past its TTL, and stops on Unlock.
func TestAutoRenewKeepsLockUntilUnlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		l := newLocker(t, asNodes(fakes), redlock.Config{AutoRenew: true, NodeTimeout: 20 * ms})
		lk, err := l.TryLock(t.Context(), "k", 300*ms)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second) // over six TTLs
		if lk.Err() != nil || time.Now().After(lk.Until()) {
			t.Fatalf("renewed lock ended: %v, Until %v", lk.Err(), lk.Until())
		}
		for _, f := range fakes {
			if f.value("k") != lk.Token() {
				t.Fatalf("%s lost the key while renewed", f.addr)
			}
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		select {
		case <-lk.Done():
		default:
			t.Fatal("Done is open after Unlock")
		}
		if !errors.Is(lk.Err(), context.Canceled) || errors.Is(lk.Err(), redlock.ErrLockLost) {
			t.Fatalf("Err after Unlock = %v, want context.Canceled", lk.Err())
		}
		sent := fakes[0].sent.Load()
		time.Sleep(time.Second)
		if fakes[0].sent.Load() != sent {
			t.Fatal("the watchdog kept renewing after Unlock")
		}
	})
}

// Renewals are timed from Until: masters that take 40% of the TTL to
// answer every call (a durable confirmation waiting for an fsync) leave a
// renewal timed from the grant (a third of the TTL after it) finishing
// after Until; the lock must hold all the same.
func TestRenewalTimedFromUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 3 * time.Second
		fakes := newFakes(ttl*4/10, ttl*4/10, ttl*4/10)
		l := newLocker(t, asNodes(fakes), redlock.Config{AutoRenew: true, NodeTimeout: ttl / 2})
		lk, err := l.TryLock(t.Context(), "k", ttl)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(4 * ttl)
		if err := lk.Err(); err != nil {
			t.Fatalf("renewed lock ended on slow but healthy masters: %v", err)
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// A holder cut off from every master sees its lock-scoped context
// cancelled no later than Until; another client gets the lock only after.
func TestCutOffHolderCancelledByUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		var cut atomic.Bool
		holder := newLocker(t, links(fakes, &cut), redlock.Config{AutoRenew: true, NodeTimeout: 20 * ms})
		other := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: 20 * ms})
		lk, err := holder.TryLock(t.Context(), "k", 300*ms)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := lk.Context(t.Context())
		defer cancel()
		time.Sleep(50 * ms)
		cut.Store(true)
		until := lk.Until() // no renewal gets through from here on

		acquired := make(chan time.Time, 1)
		go func() {
			lk2, err := other.Lock(t.Context(), "k", 300*ms)
			if err != nil {
				t.Error(err)
			}
			acquired <- time.Now()
			lk2.Unlock(context.Background())
		}()
		<-ctx.Done()
		cancelledAt := time.Now()
		if cancelledAt.After(until) {
			t.Fatalf("context cancelled %v after Until", cancelledAt.Sub(until))
		}
		if cause := context.Cause(ctx); !errors.Is(cause, redlock.ErrLockLost) {
			t.Fatalf("cause = %v, want ErrLockLost", cause)
		}
		if at := <-acquired; !at.After(cancelledAt) {
			t.Fatalf("another client acquired at %v, before the holder's context ended at %v", at, cancelledAt)
		}
		time.Sleep(time.Second)
	})
}

// A renewal that finds the token gone ends the lock at once, before Until.
func TestRenewalFindsLockGone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		l := newLocker(t, asNodes(fakes), redlock.Config{AutoRenew: true, NodeTimeout: 20 * ms})
		lk, err := l.TryLock(t.Context(), "k", 3*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fakes {
			f.mu.Lock()
			delete(f.keys, "k")
			f.mu.Unlock()
		}
		<-lk.Done()
		if !time.Now().Before(lk.Until()) || !errors.Is(lk.Err(), redlock.ErrLockLost) {
			t.Fatalf("Done at %v (Until %v), Err %v: want ErrLockLost at the first renewal", time.Now(), lk.Until(), lk.Err())
		}
	})
}

// Without renewal, Done closes at Until; an Extend moves it.
func TestDoneAtUntil(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms)
		l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: 20 * ms})
		lk, err := l.TryLock(t.Context(), "k", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		done := lk.Done()
		time.Sleep(500 * ms)
		if err := lk.Extend(t.Context(), time.Second); err != nil {
			t.Fatal(err)
		}
		until := lk.Until()
		<-done
		if !time.Now().Equal(until) {
			t.Fatalf("Done closed at Until%+v", time.Since(until))
		}
		if err := lk.Extend(t.Context(), time.Second); !errors.Is(err, redlock.ErrLockLost) {
			t.Fatalf("Extend after Done = %v, want ErrLockLost", err)
		}
	})
}

func TestDo(t *testing.T) {
	for _, n := range sizes {
		_, nodes := cluster(t, n)
		l := newLocker(t, asNodes(nodes), redlock.Config{})
		ran := false
		err := l.Do(t.Context(), "job", time.Second, func(ctx context.Context) error {
			ran = true
			held := 0
			for _, v := range values(t, nodes, "job") {
				if v != "" {
					held++
				}
			}
			if held < l.Quorum() {
				t.Errorf("fn runs with the lock on %d of %d masters", held, n)
			}
			return ctx.Err()
		})
		if err != nil || !ran {
			t.Fatalf("Do = %v, ran %v", err, ran)
		}
		awaitValues(t, nodes, "job", repeat("", n)...)
		want := errors.New("boom")
		if err := l.Do(t.Context(), "job", time.Second, func(context.Context) error { return want }); err != want {
			t.Fatalf("Do returned %v, want fn's error", err)
		}
	}
}

// Do on real masters: the holder is cut off while fn runs; fn's context
// ends no later than Until, Do reports the loss, and another client takes
// the lock only after that.
func TestDoCutOff(t *testing.T) {
	_, nodes := cluster(t, 3)
	var cut atomic.Bool
	holder := newLocker(t, links(nodes, &cut), redlock.Config{NodeTimeout: 50 * ms})
	other := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 50 * ms})
	var cancelledAt time.Time
	acquired := make(chan time.Time, 1)
	err := holder.Do(t.Context(), "job", 400*ms, func(ctx context.Context) error {
		cut.Store(true)
		go func() {
			lk, err := other.Lock(t.Context(), "job", time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			acquired <- time.Now()
			lk.Unlock(context.Background())
		}()
		<-ctx.Done()
		cancelledAt = time.Now()
		return nil
	})
	if !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("Do = %v, want ErrLockLost", err)
	}
	if at := <-acquired; !at.After(cancelledAt) {
		t.Fatalf("another client acquired at %v, before fn's context ended at %v", at, cancelledAt)
	}
}

// Unlock with a nil context releases the lock and stops its renewal, as
// with context.Background(): before, it returned ErrInvalid and the
// renewal went on for ever.
func TestUnlockNilContextStopsRenewal(t *testing.T) {
	_, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{AutoRenew: true})
	lk, err := l.TryLock(t.Context(), "renewed", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context
	if err := lk.Unlock(nilCtx); err != nil {
		t.Fatalf("Unlock(nil): %v", err)
	}
	awaitValues(t, nodes, "renewed", "", "", "")
	select {
	case <-lk.Done():
	default:
		t.Fatal("Done is open after Unlock(nil): the renewal goes on")
	}
	if err := lk.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err after Unlock(nil) = %v, want the Unlock's", err)
	}
}
