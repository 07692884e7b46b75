package cluster_test

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/cluster"
)

// TestReplicatedFailover: a write that the lagging replica had not got
// when its master crashed is missing on the master Sentinel promotes; one
// that it had is there; the old master rejoins as a replica of the new one.
func TestReplicatedFailover(t *testing.T) {
	ctx := ctxT(t)
	r, err := cluster.StartReplicated(ctx, cluster.ReplicatedConfig{Config: cluster.Config{Nodes: 2}, Watched: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	m := r.Nodes()[1]
	if addr, err := r.MasterAddr(ctx); err != nil || addr != m.Addr() {
		t.Fatalf("sentinel names %q (%v), want %s", addr, err, m.Addr())
	}
	if n := setWait(t, m.Addr(), "synced"); n != 1 {
		t.Fatalf("WAIT 1 = %d before the lag", n)
	}
	if err := r.Lag(time.Minute); err != nil {
		t.Fatal(err)
	}
	mustDo(t, m.Addr(), "SET", "lagged", "1")
	if err := r.Crash(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	addr, err := r.AwaitFailover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("failover in %v, to %s", time.Since(start).Round(time.Millisecond), addr)
	if addr != r.Replica(1) {
		t.Errorf("promoted %s, want the replica %s", addr, r.Replica(1))
	}
	if !exists(t, addr, "synced") || exists(t, addr, "lagged") {
		t.Errorf("promoted replica: synced %t (want true), lagged %t (want false)", exists(t, addr, "synced"), exists(t, addr, "lagged"))
	}
	if err := r.Rejoin(ctx, addr); err != nil {
		t.Fatal(err)
	}
	if n := setWait(t, addr, "after"); n != 1 {
		t.Errorf("WAIT 1 on the new master = %d, want the old master to acknowledge as its replica", n)
	}
	if !exists(t, m.Addr(), "after") || !exists(t, m.Addr(), "synced") {
		t.Error("the rejoined master lacks the new master's data")
	}
}

// setWait sets key on the master at addr and returns how many replicas
// acknowledged it within 2s (WAIT 1 on the connection of the write: WAIT
// counts the acknowledgements of its own connection's writes).
func setWait(t *testing.T, addr, key string) int {
	t.Helper()
	c, err := redis.Dial("tcp", addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("SET", key, "1"); err != nil {
		t.Fatal(err)
	}
	n, err := redis.Int(c.Do("WAIT", 1, 2000))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
