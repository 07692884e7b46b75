package redlock_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// pttls reads key's PTTL in milliseconds on every node.
func pttls(t *testing.T, nodes []*pool.Node, key string) []int64 {
	t.Helper()
	out := make([]int64, len(nodes))
	for i, n := range nodes {
		v, err := redis.Int64(n.Do(context.Background(), "PTTL", key))
		if err != nil {
			t.Fatalf("PTTL %s on %s: %v", key, n.Addr(), err)
		}
		out[i] = v
	}
	return out
}

// checkUntilEnforced fails the test unless a quorum of the masters keeps key
// at least until lk.Until: the lock must never believe in more validity
// than the masters enforce.
func checkUntilEnforced(t *testing.T, lk *redlock.Lock, nodes []*pool.Node, quorum int) {
	t.Helper()
	ms := pttls(t, nodes, lk.Key())
	left := time.Until(lk.Until()) // read after the PTTLs: never less than at their reading
	slices.Sort(ms)
	slices.Reverse(ms)
	if enforced := time.Duration(ms[quorum-1]) * time.Millisecond; left > enforced {
		t.Fatalf("Until is %v ahead, but a quorum of the masters keeps %q only %v longer (PTTLs %v ms)", left, lk.Key(), enforced, ms)
	}
}

// Defect 3 of issue 8: two of three masters stall during Extend(300ms) of a
// lock with a long TTL; the extend fails with 1 of 3, but the stalled
// masters apply it when they resume. Until must not exceed extendStart +
// 300ms, and Done/Err report the loss then.
func TestFailedShorterExtendLowersUntil(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 50 * time.Millisecond})
	lk, err := l.Lock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// A first Extend loads the script everywhere: the stalled masters'
	// EVALSHA will find it.
	if err := lk.Extend(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	await(t, "the first Extend to land everywhere", func() bool { return slices.Min(pttls(t, nodes, "k")) > 60000 })
	for _, s := range servers[1:] {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Resume() })
	}
	start := time.Now()
	err = lk.Extend(t.Context(), 300*time.Millisecond)
	var qerr *redlock.QuorumError
	if !errors.As(err, &qerr) || qerr.Granted != 1 {
		t.Fatalf("Extend with two masters stalled: %v, want 1 of 3 granted", err)
	}
	if until := lk.Until(); until.After(start.Add(300 * time.Millisecond)) {
		t.Fatalf("after a failed Extend(300ms), Until is %v after its start", until.Sub(start))
	}
	for _, s := range servers[1:] {
		s.Resume()
	}
	await(t, "the late PEXPIREs to land", func() bool {
		ms := pttls(t, nodes, "k")
		return ms[1] <= 300 && ms[2] <= 300
	})
	checkUntilEnforced(t, lk, nodes, 2)
	<-lk.Done() // no later than Until, 300ms after start at most
	if !errors.Is(lk.Err(), redlock.ErrLockLost) {
		t.Fatalf("Err = %v, want ErrLockLost", lk.Err())
	}
	other := newLocker(t, asNodes(nodes), redlock.Config{})
	lk2, err := other.Lock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if lk.Err() == nil {
		t.Fatal("another client holds the lock while the first reports it valid")
	}
	lk2.Unlock(t.Context())
}

// heldReply forwards extend calls of TTL ms to the master, then holds back
// the reply until release is closed.
type heldReply struct {
	redlock.Node
	ms       int64
	executed chan<- struct{}
	release  <-chan struct{}
}

func (h *heldReply) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	reply, err := h.Node.Eval(ctx, hash, src, keys, args...)
	if len(args) > 1 && args[1] == h.ms {
		h.executed <- struct{}{}
		<-h.release
	}
	return reply, err
}

// Defect 4 of issue 8: Extend(20s) is applied first, Extend(1.5s) second,
// and the 20s replies come back last. Until must end up no later than what
// the masters enforce.
func TestConcurrentExtendsKeepUntilEnforced(t *testing.T) {
	_, nodes := cluster(t, 3)
	executed := make(chan struct{}, 3)
	release := make(chan struct{})
	held := make([]redlock.Node, len(nodes))
	for i, n := range nodes {
		held[i] = &heldReply{Node: n, ms: 20000, executed: executed, release: release}
	}
	l := newLocker(t, held, redlock.Config{NodeTimeout: time.Second})
	lk, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 2)
	go func() { errs <- lk.Extend(t.Context(), 20*time.Second) }()
	for range nodes {
		<-executed // applied everywhere, replies held
	}
	go func() { errs <- lk.Extend(t.Context(), 1500*time.Millisecond) }()
	// Let the second extend land if it is sent at all before the first
	// returned (a serialised Extend waits instead: then this gives up).
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline) && slices.Max(pttls(t, nodes, "k")) > 1500 {
		time.Sleep(2 * time.Millisecond)
	}
	close(release)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	checkUntilEnforced(t, lk, nodes, 2)
}

// lateLanding fails extend calls of TTL ms at once, as a timed-out call
// does, but runs them on the master later, at landing.land: a command
// still in flight that lands after a later extend.
type lateLanding struct {
	redlock.Node
	ms      int64
	landing *landings
}

var errInFlight = errors.New("in flight")

// Abilities forwards the wrapped Node's, but for its script calls.
func (l *lateLanding) Abilities() redlock.Abilities { return callsThrough(l.Node) }

func (l *lateLanding) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	if len(args) > 1 && args[1] == l.ms && l.landing.later(func() {
		l.Node.Eval(context.Background(), hash, src, keys, args...)
	}) {
		return nil, errInFlight
	}
	return l.Node.Eval(ctx, hash, src, keys, args...)
}

// landings holds calls back until land: each runs then, on a goroutine of
// its own. A call made after land runs at once (later reports false), so
// that a call still in flight when a test ends is not added to the wait.
type landings struct {
	mu     sync.Mutex
	landed bool
	wg     sync.WaitGroup
	gate   chan struct{}
}

func newLandings() *landings { return &landings{gate: make(chan struct{})} }

func (l *landings) later(f func()) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.landed {
		return false
	}
	l.wg.Go(func() {
		<-l.gate
		f()
	})
	return true
}

// land lets the held calls run and waits for them.
func (l *landings) land() {
	l.mu.Lock()
	if !l.landed {
		l.landed = true
		close(l.gate)
	}
	l.mu.Unlock()
	l.wg.Wait()
}

// Defect 4 of issue 8, the in-flight case: an earlier, shorter Extend whose
// outcome was not known on two masters lands there after a later, longer
// Extend succeeded. The later Until must allow for it.
func TestInFlightShorterExtendBoundsLaterUntil(t *testing.T) {
	_, nodes := cluster(t, 3)
	landing := newLandings()
	t.Cleanup(landing.land)
	wrapped := asNodes(nodes)
	for i := 1; i < 3; i++ {
		wrapped[i] = &lateLanding{Node: nodes[i], ms: 2000, landing: landing}
	}
	l := newLocker(t, wrapped, redlock.Config{})
	lk, err := l.TryLock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := lk.Extend(t.Context(), 2*time.Second); !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("Extend with two calls in flight: %v, want ErrLockLost", err)
	}
	if until := lk.Until(); until.After(start.Add(2 * time.Second)) {
		t.Fatalf("after a failed Extend(2s), Until is %v after its start", until.Sub(start))
	}
	if err := lk.Extend(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	landing.land()
	checkUntilEnforced(t, lk, nodes, 2)
}

// Renewals with one TTL keep a lock alive while one master's calls all
// fail: its unknown outcomes never shorten the renewed validity.
func TestSameTTLExtendsSurviveAFailingMaster(t *testing.T) {
	_, nodes := cluster(t, 3)
	landing := newLandings()
	t.Cleanup(landing.land)
	wrapped := asNodes(nodes)
	wrapped[2] = &lateLanding{Node: nodes[2], ms: 3000, landing: landing}
	l := newLocker(t, wrapped, redlock.Config{})
	ttl := 3 * time.Second
	lk, err := l.TryLock(t.Context(), "k", ttl)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		before := time.Now()
		if err := lk.Extend(t.Context(), ttl); err != nil {
			t.Fatal(err)
		}
		// Until = start + ttl - elapsed - drift, with start >= before and
		// elapsed <= the call's duration.
		floor := before.Add(ttl - 2*time.Since(before) - clock.Drift(ttl, redlock.DefaultDriftFactor))
		if lk.Until().Before(floor) {
			t.Fatalf("Until %v short of %v: shortened by a failing master", lk.Until().Sub(before), floor.Sub(before))
		}
	}
}

// An Extend with a shorter TTL may land the moment it is sent, so Until
// must be lowered then, not only when the Extend returns: a holder that
// reads Until while a renewal with the lock's TTL runs beside a longer
// manual Extend must never see more than the masters may enforce. The
// masters are frozen so that the Extend stays in flight; Until is checked
// while it is.
func TestInFlightExtendLowersUntilAtOnce(t *testing.T) {
	servers, nodes := cluster(t, 3)
	l := newLocker(t, asNodes(nodes), redlock.Config{NodeTimeout: 5 * time.Second})
	lk, err := l.Lock(t.Context(), "k", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	resumed := false
	resume := func() {
		if resumed {
			return
		}
		resumed = true
		for _, s := range servers {
			if err := s.Resume(); err != nil {
				t.Error(err)
			}
		}
	}
	defer resume()
	const short = 6 * time.Second
	start := time.Now()
	returned := make(chan error, 1)
	go func() { returned <- lk.Extend(context.Background(), short) }()
	await(t, "Until lowered to the in-flight Extend's TTL", func() bool {
		return !lk.Until().After(start.Add(short))
	})
	select {
	case err := <-returned:
		t.Fatalf("Extend returned (%v) before Until was seen lowered: the masters were frozen", err)
	default:
	}
	resume()
	if err := <-returned; err != nil {
		t.Fatalf("Extend after the masters resumed: %v", err)
	}
	checkUntilEnforced(t, lk, nodes, l.Quorum())
}
