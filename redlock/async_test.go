package redlock_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// callbackNode is a fake master whose calls complete by callback
// (Abilities.EvalAsync): a command, once sent, completes at its own delay
// whatever its context, and commands overtake one another freely (a slow
// acquire lands after a quick release sent later), as on a transport that
// spreads them over connections. done runs on a goroutine of the fake's,
// or, when the fake has no delay, on the caller's goroutine before the
// call returns.
type callbackNode struct {
	*fake
	async atomic.Int32 // calls made through the callback path
}

var _ redlock.Capable = (*callbackNode)(nil)

// Abilities gives the fake's calls completed by callback.
func (c *callbackNode) Abilities() redlock.Abilities {
	return redlock.Abilities{EvalAsync: c.EvalPreparedAsync}
}

func callbackNodes(fakes []*fake) []*callbackNode {
	out := make([]*callbackNode, len(fakes))
	for i, f := range fakes {
		out[i] = &callbackNode{fake: f}
	}
	return out
}

func (c *callbackNode) EvalPreparedAsync(ctx context.Context, src string, cmdArgs []any, done redlock.Completion) {
	c.async.Add(1)
	nkeys := cmdArgs[1].(int)
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = cmdArgs[2+i].(string)
	}
	run := func() {
		done.Complete(c.fake.Eval(context.WithoutCancel(ctx), cmdArgs[0].(string), src, keys, cmdArgs[2+nkeys:]...))
	}
	if c.delay == 0 && c.setDelay == 0 {
		run()
		return
	}
	go run()
}

// tombstoned reports whether the fake holds a tombstone (a release that
// found nothing of its own).
func (f *fake) tombstoned() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.keys {
		if _, ok := f.live(k); ok && strings.Contains(k, ":tomb:") {
			return true
		}
	}
	return false
}

// Unlock right after TryLock, while a slow master's acquire is still on
// its way: the release overtakes it, leaves a tombstone, and the acquire
// that lands after it sets nothing.
func TestCallbackUnlockOvertakingAPendingSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		fakes[2].setDelay = 10 * ms
		nodes := callbackNodes(fakes)
		lockThenUnlockNodes(t, asNodes(nodes))
		synctest.Wait()
		if !fakes[2].tombstoned() {
			t.Fatal("the release did not overtake the slow acquire: no tombstone")
		}
		time.Sleep(20 * ms)
		if v := fakes[2].value("k"); v != "" {
			t.Fatalf("the slow master kept the key after Unlock: %q", v)
		}
		if nodes[2].async.Load() != 2 {
			t.Fatalf("%d calls went through the callback path, want the acquire and the release", nodes[2].async.Load())
		}
	})
}

// An acquire that lands long after the node timeout, after Unlock's
// release, sets nothing.
func TestCallbackUnlockBeforeALateAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		fakes[2].setDelay = 200 * ms
		nodes := callbackNodes(fakes)
		lockThenUnlockNodes(t, asNodes(nodes))
		time.Sleep(100 * ms)
		if got := nodes[2].async.Load(); got != 2 {
			t.Fatalf("%d calls sent to the slow master, want the acquire and the release", got)
		}
		time.Sleep(150 * ms)
		if v := fakes[2].value("k"); v != "" {
			t.Fatalf("the late acquire's key stayed after Unlock: %q", v)
		}
	})
}

// A failed attempt releases every master whose acquire may land, at once;
// acquires that land after the attempt returned set nothing. The attempt
// itself waits for none of them.
func TestCallbackFailedAttemptReleasesLateAcquires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		fakes[1].setDelay, fakes[2].setDelay = 200*ms, 300*ms
		l := newLocker(t, asNodes(callbackNodes(fakes)), redlock.Config{NodeTimeout: 50 * ms})
		start := time.Now()
		if _, err := l.TryLock(t.Context(), "k", time.Minute); err == nil {
			t.Fatal("TryLock succeeded with one of three masters in time")
		}
		if d := time.Since(start); d != 50*ms {
			t.Fatalf("TryLock returned after %v, want the 50ms node timeout", d)
		}
		time.Sleep(5 * ms) // the release takes 1ms
		if v := fakes[0].value("k"); v != "" {
			t.Fatalf("the fast master kept the failed attempt's key: %q", v)
		}
		time.Sleep(200 * ms)
		if v := fakes[1].value("k"); v != "" {
			t.Fatalf("master 1 kept the key of an acquire that landed after the attempt: %q", v)
		}
		time.Sleep(100 * ms)
		if v := fakes[2].value("k"); v != "" {
			t.Fatalf("master 2 kept the key of an acquire that landed after the attempt: %q", v)
		}
	})
}

// Calls that complete on the caller's goroutine, before the call returns,
// neither deadlock nor lose a vote.
func TestCallbackCompletesInline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(0, 0, 0)
		nodes := callbackNodes(fakes)
		l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 50 * ms})
		for range 3 {
			lk, err := l.TryLock(t.Context(), "k", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if err := lk.Extend(t.Context(), time.Minute); err != nil {
				t.Fatal(err)
			}
			if _, err := l.TryLock(t.Context(), "k", time.Minute); err == nil {
				t.Fatal("a held key was granted again")
			}
			if err := lk.Unlock(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for i, n := range nodes {
			if n.async.Load() == 0 {
				t.Errorf("node %d: no call went through the callback path", i)
			}
			if v := fakes[i].value("k"); v != "" {
				t.Errorf("node %d kept the key: %q", i, v)
			}
		}
	})
}

func lockThenUnlockNodes(t *testing.T, nodes []redlock.Node) {
	t.Helper()
	l := newLocker(t, nodes, redlock.Config{NodeTimeout: 50 * ms})
	lk, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
}
