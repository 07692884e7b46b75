package cluster_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
)

// TestRestartKept checks, on real servers with and without persistence,
// that RestartKept brings a node back with its keys and their expiry,
// without the scripts it knew and without the connections it had, and
// that a later kill of a node without persistence still brings it back
// empty (the snapshot it restarted from is gone).
func TestRestartKept(t *testing.T) {
	for _, p := range []cluster.Persistence{cluster.PersistenceNone, cluster.PersistenceAOF} {
		t.Run(p.String(), func(t *testing.T) {
			ctx := ctxT(t)
			c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1, Persistence: p})
			n := c.Nodes()[0]
			mustDo(t, n.Addr(), "SET", "lock", "token", "PX", 60000)
			mustDo(t, n.Addr(), "INCR", "fence")
			sha, err := redis.String(mustDo(t, n.Addr(), "SCRIPT", "LOAD", "return 1"), nil)
			if err != nil {
				t.Fatal(err)
			}
			held, err := redis.Dial("tcp", n.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
			if _, err := held.Do("PING"); err != nil {
				t.Fatal(err)
			}

			if err := cluster.RestartKept(ctx, n); err != nil {
				t.Fatal(err)
			}
			if v, err := redis.String(do(t, n.Addr(), "GET", "lock")); err != nil || v != "token" {
				t.Errorf("lock after the restart = %q, %v; want its token", v, err)
			}
			if ms, _ := redis.Int64(do(t, n.Addr(), "PTTL", "lock")); ms <= 0 || ms > 60000 {
				t.Errorf("lock's PTTL after the restart = %d, want its expiry kept", ms)
			}
			if v, _ := redis.Int(do(t, n.Addr(), "GET", "fence")); v != 1 {
				t.Errorf("fence after the restart = %d, want 1", v)
			}
			if _, err := do(t, n.Addr(), "EVALSHA", sha, 0); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
				t.Errorf("EVALSHA after the restart: %v, want NOSCRIPT (an empty script cache)", err)
			}
			if _, err := held.Do("PING"); err == nil {
				t.Error("a connection made before the restart still answers")
			}

			if err := cluster.Restart(ctx, n, 0); err != nil {
				t.Fatal(err)
			}
			if got, want := exists(t, n.Addr(), "lock"), p == cluster.PersistenceAOF; got != want {
				t.Errorf("lock after a later kill and start: exists = %t, want %t (persistence %s)", got, want, p)
			}
		})
	}
}

// nodeOnly is a Node that can do nothing beyond the interface.
type nodeOnly struct{ cluster.Node }

func TestRestartKeptUnsupported(t *testing.T) {
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1})
	if err := cluster.RestartKept(ctxT(t), nodeOnly{c.Nodes()[0]}); !errors.Is(err, cluster.ErrUnsupported) {
		t.Errorf("RestartKept of a node that cannot keep its data = %v, want ErrUnsupported", err)
	}
}

func TestScriptFlush(t *testing.T) {
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1})
	n := c.Nodes()[0]
	sha, err := redis.String(mustDo(t, n.Addr(), "SCRIPT", "LOAD", "return 1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.ScriptFlush(ctxT(t), n.Addr()); err != nil {
		t.Fatal(err)
	}
	if v, _ := redis.Ints(do(t, n.Addr(), "SCRIPT", "EXISTS", sha)); len(v) != 1 || v[0] != 0 {
		t.Errorf("SCRIPT EXISTS after the flush = %v, want [0]", v)
	}
}
