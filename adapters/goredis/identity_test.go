package goredis_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

// The Node reads its master's run id on each new connection, after the
// client's own OnConnect, and sees a restart as a new run id.
func TestIdentity(t *testing.T) {
	m := redlocktest.NewMaster(t)
	var own atomic.Int32
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), OnConnect: func(context.Context, *redis.Conn) error {
		own.Add(1)
		return nil
	}})
	n := nodeOver(t, c)
	ctx := t.Context()
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) {
		t.Fatalf("Identity before any connection: %v, want ErrNoIdentity", err)
	}
	info, err := n.Do(ctx, "INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	id, err := n.Identity()
	if err != nil || id.PersistsEveryWrite() || !strings.Contains(info.(string), "run_id:"+id.RunID) {
		t.Fatalf("Identity = %+v, %v; INFO:\n%s", id, err, info)
	}
	if time.Since(id.Started) > time.Minute {
		t.Errorf("master started %v ago", time.Since(id.Started))
	}
	if own.Load() == 0 {
		t.Error("the client's own OnConnect did not run")
	}

	if err := m.Restart(0); err != nil {
		t.Fatal(err)
	}
	// The pooled connection is gone with the old process: the next call
	// that gets a new connection reads the new run id.
	await(t, "a call to the restarted master", func() bool {
		_, err := n.Do(ctx, "PING")
		return err == nil
	})
	if again, err := n.Identity(); err != nil || again.RunID == id.RunID {
		t.Errorf("after a restart: %+v, %v (before %q)", again, err, id.RunID)
	}
}

// TestIdentityOfEarlierConnections is the client an application used
// before it made the Node (a start-up PING): its connection was set up
// without the Node's OnConnect. The Node's first call reads the identity
// through the client before its command goes out, so a Locker with the
// default Config (the restart guard on) locks through it at once, Identity
// knows the run id, and a durable confirmation across a restart of the
// master fails with ErrMasterChanged. Without the reading, the guard
// refused every grant (the master's identity unknown: ErrInvalid) and the
// confirmation skipped the master-changed check.
func TestIdentityOfEarlierConnections(t *testing.T) {
	m := redlocktest.NewMaster(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), PoolSize: 1})
	if err := c.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	n := nodeOver(t, c)
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{})
	if err != nil {
		t.Fatalf("redlock.New with the default Config: %v", err)
	}
	lk, err := l.TryLock(t.Context(), "job", 10*time.Second)
	if err != nil {
		t.Fatalf("TryLock through a client connected before New: %v", err)
	}
	if err := lk.Unlock(t.Context()); err != nil {
		t.Fatal(err)
	}
	id, err := n.Identity()
	if want := runID(t, m.Addr()); err != nil || id.RunID != want {
		t.Fatalf("Identity = %+v, %v; want run id %s", id, err, want)
	}
	if got := c.PoolStats().TotalConns; got != 1 {
		t.Errorf("the client has %d connections, want the one made before New", got)
	}
	if err := m.Restart(0); err != nil {
		t.Fatal(err)
	}
	if o := durable(n, false, 0); !errors.Is(o.err, nodeutil.ErrMasterChanged) {
		t.Errorf("a confirmation across a restart: %+v, want ErrMasterChanged", o)
	}
}

// runID is the run id of the master at addr, read on a connection of the
// test's own.
func runID(t *testing.T, addr string) string {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	info, err := c.Info(t.Context(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	return nodeutil.InfoField(info, "run_id")
}

// A Node over a Redis Cluster knows no identity: many processes are its
// master. Identity is not among its Abilities, so redlock.New refuses it
// while the restart guard is on.
func TestIdentityCluster(t *testing.T) {
	n := nodeOver(t, redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{redlocktest.NewClusterMaster(t).Addr()}}))
	if _, err := n.Do(t.Context(), "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Identity(); !errors.Is(err, redlock.ErrNoIdentity) {
		t.Errorf("a cluster client's Node: Identity %v, want ErrNoIdentity", err)
	}
	if n.Abilities().Identity != nil {
		t.Error("a cluster client's Node has Abilities.Identity")
	}
	if _, err := redlock.New([]redlock.Node{n}, redlock.Config{}); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("redlock.New with the restart guard over a cluster client's Node: %v, want ErrInvalid", err)
	}
}

// await polls cond until it holds, failing t after 10s.
func await(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
