package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func do(t *testing.T, addr, cmd string, args ...any) (any, error) {
	t.Helper()
	c, err := redis.Dial("tcp", addr,
		redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(300*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd, args...)
}

func mustDo(t *testing.T, addr, cmd string, args ...any) any {
	t.Helper()
	v, err := do(t, addr, cmd, args...)
	if err != nil {
		t.Fatalf("%s %v on %s: %v", cmd, args, addr, err)
	}
	return v
}

func exists(t *testing.T, addr, key string) bool {
	t.Helper()
	n, err := redis.Int(mustDo(t, addr, "EXISTS", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// forBackends runs f on every backend usable here, as a subtest each.
func forBackends(t *testing.T, f func(t *testing.T, backend string)) {
	for _, b := range chaostest.Backends(t) {
		t.Run(b, func(t *testing.T) { f(t, b) })
	}
}

func TestRestartKeepsDataOnlyWithAOF(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		for _, tc := range []struct {
			p    cluster.Persistence
			keep bool
		}{
			{cluster.PersistenceNone, false},
			{cluster.PersistenceAOF, true},
		} {
			t.Run(tc.p.String(), func(t *testing.T) {
				ctx := ctxT(t)
				c := chaostest.Start(t, backend, cluster.Config{Nodes: 1, Persistence: tc.p})
				n := c.Nodes()[0]
				if n.Persistent() != tc.keep {
					t.Fatalf("Persistent() = %t, want %t", n.Persistent(), tc.keep)
				}
				mustDo(t, n.Addr(), "SET", "k", "v", "PX", 60000)
				if err := cluster.Restart(ctx, n, 0); err != nil {
					t.Fatal(err)
				}
				if got := exists(t, n.Addr(), "k"); got != tc.keep {
					t.Errorf("key after restart: exists = %t, want %t", got, tc.keep)
				}
			})
		}
	})
}

func TestKillStartPauseResume(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ctx := ctxT(t)
		c := chaostest.Start(t, backend, cluster.Config{Nodes: 2})
		n, other := c.Nodes()[0], c.Nodes()[1]

		if err := n.Kill(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := do(t, n.Addr(), "PING"); err == nil {
			t.Error("a killed node answers PING")
		}
		if err := n.Kill(ctx); err != nil {
			t.Errorf("killing a killed node: %v", err)
		}
		mustDo(t, other.Addr(), "PING") // the other node is independent
		if err := n.Start(ctx); err != nil {
			t.Fatal(err)
		}
		mustDo(t, n.Addr(), "PING")

		if err := n.Pause(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := do(t, n.Addr(), "PING")
		var timeout interface{ Timeout() bool }
		if err == nil {
			t.Error("a paused node answers PING")
		} else if !errors.As(err, &timeout) || !timeout.Timeout() {
			t.Errorf("PING on a paused node: %v, want a timeout", err)
		}
		if err := n.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		mustDo(t, n.Addr(), "PING")

		// A paused node can be killed and started again.
		if err := n.Pause(ctx); err != nil {
			t.Fatal(err)
		}
		if err := cluster.Restart(ctx, n, 0); err != nil {
			t.Fatal(err)
		}
		mustDo(t, n.Addr(), "PING")
	})
}

func TestRestartDelay(t *testing.T) {
	ctx := ctxT(t)
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1})
	n := c.Nodes()[0]
	const delay = 300 * time.Millisecond
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cluster.Restart(ctx, n, delay) }()
	// The node goes down and stays down until the delay has passed.
	for {
		if _, err := do(t, n.Addr(), "PING"); err != nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < delay {
		t.Errorf("restart took %v, less than its delay %v", el, delay)
	}
	mustDo(t, n.Addr(), "PING")

	// A context that ends during the delay leaves the node down.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := cluster.Restart(cctx, n, time.Hour); err == nil {
		t.Fatal("Restart with an ended context: nil error")
	}
	if _, err := do(t, n.Addr(), "PING"); err == nil {
		t.Error("node answers after a cancelled restart")
	}
}

func TestClockJump(t *testing.T) {
	forBackends(t, func(t *testing.T, backend string) {
		ctx := ctxT(t)
		c := chaostest.Start(t, backend, cluster.Config{Nodes: 1})
		addr := c.Nodes()[0].Addr()
		mustDo(t, addr, "SET", "long", "v", "PX", 60000)
		mustDo(t, addr, "SET", "short", "v", "PX", 5000)
		mustDo(t, addr, "SET", "forever", "v")

		r, err := cluster.ClockJump(ctx, addr, 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if r != (cluster.JumpResult{Shifted: 1, Expired: 1}) {
			t.Errorf("ClockJump = %+v, want 1 shifted and 1 expired", r)
		}
		if exists(t, addr, "short") {
			t.Error("a key whose TTL is shorter than the jump survived it")
		}
		if !exists(t, addr, "forever") {
			t.Error("a key without TTL was removed by the jump")
		}
		pttl, _ := redis.Int(mustDo(t, addr, "PTTL", "long"), nil)
		if pttl > 50000 || pttl < 40000 {
			t.Errorf("PTTL after a 10s jump = %d ms, want about 50000", pttl)
		}

		// A jump back lengthens TTLs.
		if _, err := cluster.ClockJump(ctx, addr, -20*time.Second); err != nil {
			t.Fatal(err)
		}
		pttl, _ = redis.Int(mustDo(t, addr, "PTTL", "long"), nil)
		if pttl < 60000 {
			t.Errorf("PTTL after a -20s jump = %d ms, want about 70000", pttl)
		}
	})
}

func TestCountKeysAndGet(t *testing.T) {
	ctx := ctxT(t)
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1})
	addr := c.Nodes()[0].Addr()
	for i := range 2500 {
		mustDo(t, addr, "SET", fmt.Sprintf("a:%d", i), i)
	}
	mustDo(t, addr, "SET", "b:1", "x")
	n, err := cluster.CountKeys(ctx, addr, "a:*")
	if err != nil || n != 2500 {
		t.Errorf("CountKeys(a:*) = %d, %v; want 2500", n, err)
	}
	v, ok, err := cluster.Get(ctx, addr, "b:1")
	if err != nil || !ok || v != "x" {
		t.Errorf("Get(b:1) = %q, %t, %v", v, ok, err)
	}
	if _, ok, err := cluster.Get(ctx, addr, "nope"); err != nil || ok {
		t.Errorf("Get(nope) = %t, %v; want false, nil", ok, err)
	}
}

func TestAddrsAndNames(t *testing.T) {
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 3})
	addrs := cluster.Addrs(c)
	if len(addrs) != 3 || c.Backend() != cluster.BackendLocal {
		t.Fatalf("Addrs = %v, backend %s", addrs, c.Backend())
	}
	seen := map[string]bool{}
	for i, n := range c.Nodes() {
		if n.Addr() != addrs[i] || seen[n.Addr()] {
			t.Errorf("node %d: addr %s (all: %v)", i, n.Addr(), addrs)
		}
		seen[n.Addr()] = true
		if want := fmt.Sprintf("redis-%d", i); n.Name() != want {
			t.Errorf("node %d: name %q, want %q", i, n.Name(), want)
		}
	}
}

func TestStartUnknownBackend(t *testing.T) {
	if _, err := cluster.Start(context.Background(), "nope", cluster.Config{}); err == nil {
		t.Fatal("unknown backend: nil error")
	}
}
