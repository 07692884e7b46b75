package goredis_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlocktest"
)

// The Node reads its master's run id on each new connection, after the
// client's own OnConnect, and sees a restart as a new run id.
func TestMasterIdentity(t *testing.T) {
	m := redlocktest.NewMaster(t)
	var own atomic.Int32
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), OnConnect: func(context.Context, *redis.Conn) error {
		own.Add(1)
		return nil
	}})
	n := nodeOver(t, c)
	ctx := t.Context()
	if _, _, _, _, ok := n.MasterIdentity(); ok {
		t.Fatal("identity known before any connection")
	}
	info, err := n.Do(ctx, "INFO", "server")
	if err != nil {
		t.Fatal(err)
	}
	runID, started, restarted, durable, ok := n.MasterIdentity()
	if !ok || restarted || durable || !strings.Contains(info.(string), "run_id:"+runID) {
		t.Fatalf("identity %q restarted %t durable %t ok %t; INFO:\n%s", runID, restarted, durable, ok, info)
	}
	if time.Since(started) > time.Minute {
		t.Errorf("master started %v ago", time.Since(started))
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
	again, _, restarted, _, ok := n.MasterIdentity()
	if !ok || again == runID || !restarted {
		t.Errorf("after a restart: %q (before %q), restarted %t", again, runID, restarted)
	}
}

// A Node over a Redis Cluster knows no identity: many processes are its
// master.
func TestMasterIdentityCluster(t *testing.T) {
	n := nodeOver(t, redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{redlocktest.NewClusterMaster(t).Addr()}}))
	if _, err := n.Do(t.Context(), "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ok := n.MasterIdentity(); ok {
		t.Error("a cluster client's Node reports an identity")
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
