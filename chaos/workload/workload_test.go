package workload_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newEnv(t *testing.T, clients int) *workload.Env {
	t.Helper()
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 3})
	e, err := workload.NewEnv(c, workload.EnvConfig{Clients: clients})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestRunRecordsSafeHistory(t *testing.T) {
	e := newEnv(t, 3)
	// Every client must get a lock: the workload runs in rounds of a
	// second until each has (on a loaded machine one may lose every race
	// of a round), 20 at most.
	for round := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		workload.Run(ctx, e, workload.Config{Keys: 2, TTL: time.Second, Hold: time.Millisecond, Seed: uint64(1 + round)})
		cancel()
		if len(acquiredBy(checker.Check(e.History.Events()))) == 3 {
			break
		}
	}

	r := checker.Check(e.History.Events())
	n := e.Counts()
	if n.Acquired < 20 || len(r.Intervals) != n.Acquired {
		t.Fatalf("%d acquired, %d intervals", n.Acquired, len(r.Intervals))
	}
	if !r.Safe() || r.Orphans != 0 {
		t.Errorf("%d overlaps, %d orphans on healthy nodes", len(r.Overlaps), r.Orphans)
	}
	if n.Writes != n.Acquired || n.Rejected != 0 || n.Late != 0 {
		t.Errorf("counts %+v: every holder writes once, in time", n)
	}
	for _, iv := range r.Intervals {
		if !iv.Released {
			t.Errorf("%v ended without a release", iv)
		}
	}
	if clients := acquiredBy(r); len(clients) != 3 {
		t.Errorf("only clients %v acquired", clients)
	}
	// Unlock may return at quorum; the other deletes land soon after.
	if left, err := e.AwaitNoKeys(context.Background(), 3*time.Second); err != nil || left != 0 {
		t.Errorf("%d keys left 3s after every release (%v)", left, err)
	}
	// Fencing counters outlive their locks: they are not leftovers; a lock
	// key is.
	addr := e.Cluster.Nodes()[0].Addr()
	c, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Do("SET", e.Key("{k0}:fence"), 7)
	if left, err := e.KeysLeft(context.Background()); err != nil || left != 0 {
		t.Errorf("KeysLeft = %d, %v with only a fencing counter", left, err)
	}
	c.Do("SET", e.Key("k0"), "token", "PX", 60000)
	if left, err := e.KeysLeft(context.Background(), e.Cluster.Nodes()[0]); err != nil || left != 1 {
		t.Errorf("KeysLeft = %d, %v with one lock key", left, err)
	}
}

func TestPausedHolderWriteIsRejected(t *testing.T) {
	e := newEnv(t, 2)
	ctx := context.Background()
	const ttl = 200 * time.Millisecond
	a, err := e.Client(0).Acquire(ctx, "k", ttl, true)
	if err != nil {
		t.Fatal(err)
	}
	// Client 1 gets the lock once a's keys expire, and writes.
	b, err := e.Client(1).Acquire(ctx, "k", ttl, false)
	if err != nil {
		t.Fatal(err)
	}
	if !b.Write() {
		t.Fatal("the current holder's write was rejected")
	}
	if a.Write() {
		t.Error("the paused holder's stale write was accepted")
	}
	a.Release(ctx)
	b.Release(ctx)
	n := e.Counts()
	if n.Rejected != 1 || n.Late != 1 || n.Writes != 2 {
		t.Errorf("counts %+v, want 2 writes, 1 rejected, 1 late", n)
	}
	if r := checker.Check(e.History.Events()); !r.Safe() {
		t.Errorf("overlaps %v: a's validity ended before b's grant", r.Overlaps)
	}
	if e.Key("k") == "k" || e.KeyPattern() == "*" {
		t.Error("keys are not prefixed by the run")
	}
}

// TestEveryKindHoldsOnHealthyNodes runs every kind of the generative
// workload on healthy masters: every invariant holds, and every kind was
// granted (its keys appear in the history).
func TestEveryKindHoldsOnHealthyNodes(t *testing.T) {
	e := newEnv(t, 3)
	// It runs for at least 2s, and on until every kind was granted (or
	// 20s passed): the cycles' contexts end at random, and a kind with long
	// cycles may need a few.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for start := time.Now(); ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
			if time.Since(start) >= 2*time.Second && len(grantedKinds(e.History.Events())) == len(workload.Kinds) {
				cancel()
			}
		}
	}()
	if err := workload.Run(ctx, e, workload.Config{Kinds: workload.Kinds, Keys: 1, TTL: 300 * time.Millisecond,
		Hold: time.Millisecond, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	events := e.History.Events()
	r := checker.Check(events)
	if !r.Holds() || r.Orphans != 0 {
		t.Errorf("%d overlaps, violations %v, %d orphans on healthy nodes", len(r.Overlaps), r.Violations, r.Orphans)
	}
	if vs := checker.OutOfOrder(events); len(vs) > 0 {
		t.Errorf("fair waiters served out of order on healthy nodes: %v", vs)
	}
	granted := map[string]bool{}
	for _, iv := range r.Intervals {
		granted[iv.Key] = true
	}
	for _, k := range workload.Kinds {
		name := "k0"
		if k != workload.Fenced {
			name = string(k) + "-k0"
		}
		if !granted[name] {
			t.Errorf("kind %s: no grant on %s (granted %v)", k, name, granted)
		}
	}
}

// TestKeysLeftIgnoresTombstonesWithATTL checks that a tombstone with a
// TTL is not a key left behind, one without a TTL is, and so is a lock
// key; fence counters are not.
func TestKeysLeftIgnoresTombstonesWithATTL(t *testing.T) {
	e := newEnv(t, 1)
	ctx := context.Background()
	addr := e.Cluster.Nodes()[0].Addr()
	c, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	count := func(want int) {
		t.Helper()
		if n, err := e.KeysLeft(ctx); err != nil || n != want {
			t.Errorf("KeysLeft = %d, %v; want %d", n, err, want)
		}
	}
	mustDo := func(args ...any) {
		t.Helper()
		if _, err := c.Do(args[0].(string), args[1:]...); err != nil {
			t.Fatal(err)
		}
	}
	mustDo("SET", e.Key("{k}:fence"), 7)
	mustDo("SET", e.Key("{k}:tomb:abc"), 1, "PX", 60000)
	count(0)
	mustDo("SET", e.Key("{k}:tomb:def"), 1)
	count(1)
	mustDo("SET", e.Key("k"), "token", "PX", 60000)
	count(2)
}

// grantedKinds returns the kinds whose key of index 0 appears among the
// grants of events.
func grantedKinds(events []checker.Event) map[workload.Kind]bool {
	names := map[string]bool{}
	for _, iv := range checker.Check(events).Intervals {
		names[iv.Key] = true
	}
	out := map[workload.Kind]bool{}
	for _, k := range workload.Kinds {
		name := "k0"
		if k != workload.Fenced {
			name = string(k) + "-k0"
		}
		if names[name] {
			out[k] = true
		}
	}
	return out
}

// acquiredBy is the set of clients that held a lock in r.
func acquiredBy(r checker.Result) map[int]bool {
	clients := map[int]bool{}
	for _, iv := range r.Intervals {
		clients[iv.Client] = true
	}
	return clients
}
