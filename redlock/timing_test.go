package redlock_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/redlock"
)

const ms = time.Millisecond

// Until is start + ttl - drift, on the bubble's fake clock: the masters
// set the key's TTL after start, so the acquisition's own time counts once,
// in whether any validity is left (ttl - elapsed - drift > 0), not again in
// Until. (It counted twice before: a lock taken in 300ms against slow
// masters lost 300ms of its guarantee for nothing.) The same for Extend.
func TestValidityFormula(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(3*ms, 7*ms, 11*ms, 13*ms, 40*ms)
		l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: 45 * ms})
		ttl := 10 * time.Second
		start := time.Now()
		lk, err := l.TryLock(t.Context(), "k", ttl)
		if err != nil {
			t.Fatal(err)
		}
		elapsed := 11 * ms // the third answer decides
		if got := time.Since(start); got != elapsed {
			t.Fatalf("TryLock took %v, want %v (the quorum's answer)", got, elapsed)
		}
		want := start.Add(ttl - clock.Drift(ttl, redlock.DefaultDriftFactor))
		if !lk.Until().Equal(want) {
			t.Fatalf("Until = start+%v, want start+%v", lk.Until().Sub(start), want.Sub(start))
		}

		// Extend from 1s later: Until = start' + ttl' - drift'.
		time.Sleep(time.Second)
		start = time.Now()
		if err := lk.Extend(t.Context(), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		want = start.Add(5*time.Second - clock.Drift(5*time.Second, redlock.DefaultDriftFactor))
		if !lk.Until().Equal(want) {
			t.Fatalf("after Extend: Until = start+%v, want start+%v", lk.Until().Sub(start), want.Sub(start))
		}
		time.Sleep(time.Minute) // every in-flight call ends
	})
}

// A quorum that arrives after the validity is used up is a failure, and
// its keys are released.
func TestLateQuorumFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(60*ms, 60*ms, 60*ms)
		l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: 61 * ms})
		_, err := l.TryLock(t.Context(), "k", 62*ms) // validity = 62-60-2.62 < 0
		var qerr *redlock.QuorumError
		if !errors.Is(err, redlock.ErrNotAcquired) || !errors.As(err, &qerr) || !qerr.Late || qerr.Granted < 2 {
			t.Fatalf("TryLock = %v, want a late-quorum failure", err)
		}
		time.Sleep(61 * ms) // the releases land at 120ms; the keys would expire only at 122ms
		for _, f := range fakes {
			if v := f.value("k"); v != "" {
				t.Fatalf("%s still holds %q after a late quorum", f.addr, v)
			}
		}
	})
}

// With one of five nodes never answering, TryLock and Unlock return as
// soon as the quorum answered, not at the node timeout; with three of five
// down, TryLock fails at once.
func TestDecidesWithoutWaitingForTheSlowNode(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(1*ms, 2*ms, 3*ms, 4*ms, -1)
		l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: time.Second})
		start := time.Now()
		lk, err := l.TryLock(t.Context(), "k", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 3*ms {
			t.Fatalf("TryLock took %v, want 3ms", got)
		}
		start = time.Now()
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 3*ms {
			t.Fatalf("Unlock took %v, want 3ms", got)
		}
		// The silent node's release is retried until the TTL passed
		// (retry.go); the bubble ends once the last retry gave up.
		time.Sleep(11 * time.Second)
		for _, f := range fakes[:4] { // the remaining delete landed too
			if v := f.value("k"); v != "" {
				t.Fatalf("%s still holds the key after Unlock", f.addr)
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(0, 0, 0, 1*ms, 1*ms)
		for _, f := range fakes[:3] {
			f.err = errors.New("connection refused")
		}
		l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: time.Second})
		start := time.Now()
		_, err := l.TryLock(t.Context(), "k", 10*time.Second)
		var qerr *redlock.QuorumError
		if !errors.As(err, &qerr) || qerr.Failed != 3 {
			t.Fatalf("TryLock = %v, want a *QuorumError with 3 failed", err)
		}
		if got := time.Since(start); got != 0 {
			t.Fatalf("TryLock with 3 of 5 down took %v, want no wait", got)
		}
		time.Sleep(time.Second)
	})
}

// Lock retries with backoff until the holder lets go.
func TestLockRetriesUntilFree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		l := newLocker(t, asNodes(fakes), redlock.Config{})
		held, err := l.TryLock(t.Context(), "k", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		time.AfterFunc(time.Second, func() { held.Unlock(context.Background()) })
		lk, err := l.Lock(t.Context(), "k", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(start) < time.Second {
			t.Fatalf("Lock succeeded after %v, while the lock was held", time.Since(start))
		}
		time.Sleep(ms) // the SET that came after the quorum lands
		for _, f := range fakes {
			if f.value("k") != lk.Token() {
				t.Fatalf("%s does not hold the new token", f.addr)
			}
		}
		time.Sleep(time.Second)
	})
}

func TestExponentialBackoff(t *testing.T) {
	b := redlock.ExponentialBackoff{Base: 10 * ms, Max: 100 * ms}
	want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 100 * ms, 100 * ms}
	for i, w := range want {
		if got := b.Ceiling(i + 1); got != w {
			t.Errorf("ceiling(%d) = %v, want %v", i+1, got, w)
		}
	}
	if got := b.Ceiling(200); got != 100*ms {
		t.Errorf("ceiling(200) = %v, want the cap", got)
	}
	if got := redlock.FullJitter(80*ms, 0); got != 0 {
		t.Errorf("jitter at r=0: %v", got)
	}
	if got := redlock.FullJitter(80*ms, 0.5); got != 40*ms {
		t.Errorf("jitter at r=0.5: %v", got)
	}
	for range 1000 {
		if d := b.Backoff(3); d < 0 || d >= 40*ms {
			t.Fatalf("Backoff(3) = %v, outside [0, 40ms)", d)
		}
	}
	def := redlock.ExponentialBackoff{}
	if def.Ceiling(1) != 4*ms || def.Ceiling(100) != 256*ms {
		t.Errorf("default ceilings %v..%v", def.Ceiling(1), def.Ceiling(100))
	}
}

// Unlock right after TryLock, while a slow master's SET is still on its
// way: the release to that master waits for the SET to return, so it cannot
// overtake it and leave the key behind for the whole TTL.
func TestUnlockDoesNotOvertakeAPendingSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		fakes[2].setDelay = 10 * ms // the release would arrive after 1ms
		lockThenUnlock(t, fakes)
		time.Sleep(20 * ms)
		if v := fakes[2].value("k"); v != "" {
			t.Fatalf("the slow master kept the key after Unlock: %q", v)
		}
	})
}

// A failed attempt releases a master whose SET is still on its way only
// once that SET returned: sent at once, the release would overtake it, and
// the SET would leave the key on that master for the whole TTL. (The
// pipelined pool.Node keeps them in order on its one connection anyway; a
// Node that spreads calls over connections, such as the adapters', does
// not.)
func TestFailedAttemptDoesNotOvertakeAPendingSet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		for _, f := range fakes[:2] {
			f.keys["k"] = entry{value: "another owner", expireAt: time.Now().Add(time.Hour)}
		}
		fakes[2].setDelay = 10 * ms // the release would arrive after 1ms
		l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: 50 * ms})
		if _, err := l.TryLock(t.Context(), "k", time.Minute); !errors.Is(err, redlock.ErrNotAcquired) {
			t.Fatalf("TryLock while two of three masters hold the key: err = %v, want ErrNotAcquired", err)
		}
		time.Sleep(20 * ms)
		if v := fakes[2].value("k"); v != "" {
			t.Fatalf("the slow master kept the failed attempt's key: %q", v)
		}
	})
}

// An Unlock that cannot wait for a master's acquire to return (it outlasts
// the unlock's node timeout) releases that master once it does, instead of
// leaving the key there for the whole TTL.
func TestUnlockReleasesAfterALateAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, ms)
		fakes[2].setDelay, fakes[2].deaf = 200*ms, true // lands long after its timeout
		lockThenUnlock(t, fakes)
		time.Sleep(100 * ms)
		if v := fakes[2].value("k"); v != "" {
			t.Fatal("the key is there before the late SET landed")
		}
		time.Sleep(150 * ms) // the SET lands at 200ms, the release right after
		if v := fakes[2].value("k"); v != "" {
			t.Fatalf("the late SET's key stayed after Unlock: %q", v)
		}
	})
}

// lockThenUnlock takes "k" on fakes (node timeout 50ms) and unlocks it at
// once, while a slow master's SET may still be on its way.
func lockThenUnlock(t *testing.T, fakes []*fake) {
	t.Helper()
	l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: 50 * ms})
	lk, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// A Lock call's next attempt goes out only once the failed attempt's
// releases returned: sent earlier, it finds its own last key on a master
// and counts it as a refusal. Here another owner holds master 0 for good
// and master 1 only until just after the first attempt; master 2 grants
// the first attempt and takes 20ms to release it. The second attempt wins
// masters 1 and 2 only if it waits for that release; the backoff after it
// (an hour) leaves no third.
func TestNextAttemptWaitsForTheLastOnesRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fakes := newFakes(ms, ms, 20*ms)
		fakes[2].setDelay = ms
		now := time.Now()
		fakes[0].keys["k"] = entry{value: "another owner", expireAt: now.Add(time.Hour)}
		fakes[1].keys["k"] = entry{value: "another owner", expireAt: now.Add(3 * ms / 2)}
		l := newLocker(t, asNodes(fakes), redlock.Config{NodeTimeout: 50 * ms,
			Retry: redlock.RetryFunc(func(int) time.Duration { return time.Hour })})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		lk, err := l.Lock(ctx, "k", time.Minute)
		if err != nil {
			t.Fatalf("Lock: %v; the second attempt was refused by the first one's key", err)
		}
		if err := lk.Unlock(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}
