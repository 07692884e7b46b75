package goredis_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/adapters/goredis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

// outcome is what a Confirm call delivered.
type outcome struct {
	local, replicas int
	err             error
}

// probe is the key the tests' confirmations write.
const probe = "durable-probe"

// durable runs n.Confirm and returns what it delivered.
func durable(n *goredis.Node, local bool, replicas int) outcome {
	ch := make(chan outcome, 1)
	n.Confirm(context.Background(), probe, local, replicas, func(l, r int, err error) { ch <- outcome{l, r, err} })
	return <-ch
}

// replicaOf starts a replica of the master at addr and waits until it is
// in sync, on both sides: the replica's link is up, and the master counts
// it online. After a diskless sync the master puts the replica online
// only at its first acknowledgement, which the replica sends up to a
// second after its link came up; until then WAIT does not count it.
func replicaOf(t *testing.T, addr string) {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	r := redlocktest.NewMaster(t, "--replicaof", host, port)
	c := redis.NewClient(&redis.Options{Addr: r.Addr()})
	defer c.Close()
	m := redis.NewClient(&redis.Options{Addr: addr})
	defer m.Close()
	await(t, "the replica in sync", func() bool {
		info, _ := c.Info(t.Context(), "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
	await(t, "the master counting its replica online", func() bool {
		info, _ := m.Info(t.Context(), "replication").Result()
		return strings.Contains(info, "state=online")
	})
}

// WAIT's count: 0 replicas before the replica, 1 once it is in sync (and 1
// when 2 are asked for); a Locker that asks for one replica grants once
// there is one.
func TestDurableReplicas(t *testing.T) {
	m := redlocktest.NewMaster(t, "--repl-diskless-sync-delay", "0") // the replica's first sync at once
	n := newNode(t, m.Addr())
	if o := durable(n, false, 1); o.err != nil || o.replicas != 0 {
		t.Fatalf("without a replica: %+v, want 0 replicas", o)
	}
	replicaOf(t, m.Addr())
	if o := durable(n, false, 1); o.err != nil || o.replicas != 1 || o.local != 0 {
		t.Errorf("with a replica: %+v, want 1 replica", o)
	}
	if o := durable(n, false, 2); o.err != nil || o.replicas != 1 {
		t.Errorf("2 asked of one replica: %+v, want 1", o)
	}
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{Durability: redlock.Durability{Replicas: 1}})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := l.TryLock(t.Context(), "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	lk.Unlock(t.Context())
}

// WAITAOF where the server has it (Valkey; Redis 7.2+) confirms the local
// AOF; where it does not (Redis 7.0), the confirmation is an error, never
// a silent grant.
func TestDurableLocal(t *testing.T) {
	if o := durable(newNode(t, redlocktest.NewMaster(t).Addr()), true, 0); o.err == nil {
		t.Errorf("WAITAOF on a master without AOF: %+v, want an error", o)
	}
	bin, err := exec.LookPath("valkey-server")
	if err != nil {
		t.Skip("valkey-server not on PATH (scripts/ensure-valkey.sh): WAITAOF needs Valkey or Redis 7.2+")
	}
	s, err := redisproc.Start(redisproc.Options{Binary: bin, Args: []string{"--appendonly", "yes", "--appendfsync", "everysec"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if o := durable(newNode(t, s.Addr()), true, 0); o.err != nil || o.local != 1 {
		t.Errorf("WAITAOF on Valkey with AOF: %+v, want local 1", o)
	}
}

// A confirmation by a master process other than the one that took the
// write (here it restarted in between, empty) confirms nothing: it fails
// with nodeutil.ErrMasterChanged.
func TestDurableMasterChanged(t *testing.T) {
	m := redlocktest.NewMaster(t)
	n := newNode(t, m.Addr())
	if _, err := n.Do(t.Context(), "SET", "grant", "1"); err != nil {
		t.Fatal(err)
	}
	if err := m.Restart(0); err != nil {
		t.Fatal(err)
	}
	if o := durable(n, false, 0); !errors.Is(o.err, nodeutil.ErrMasterChanged) {
		t.Errorf("confirmation after a restart: %+v, want ErrMasterChanged", o)
	}
	if o := durable(n, false, 0); o.err != nil {
		t.Errorf("the next confirmation, asked of the new process: %+v", o)
	}
}

// A confirmation holds one connection of the client while it waits: the
// client's other calls go on meanwhile over its other connections.
func TestDurableHoldsOneConnection(t *testing.T) {
	m := redlocktest.NewMaster(t)
	n := nodeOver(t, redis.NewClient(&redis.Options{Addr: m.Addr(), PoolSize: 2}))
	done := make(chan outcome, 1)
	n.Confirm(context.Background(), probe, false, 1, func(l, r int, err error) { done <- outcome{l, r, err} }) // no replica: WAIT waits its second
	for range 20 {
		if _, err := n.Do(t.Context(), "PING"); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case o := <-done:
		t.Errorf("the confirmation ended (%+v) before 20 PINGs: cannot tell whether they waited for it", o)
	default:
	}
	<-done
}

// Only a *redis.Client can confirm: a cluster client's Node has no Confirm
// among its Abilities, so redlock.New refuses Durability with it, and its
// Confirm method fails.
func TestDurableCluster(t *testing.T) {
	n := nodeOver(t, redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{redlocktest.NewClusterMaster(t).Addr()}}))
	if n.Abilities().Confirm != nil {
		t.Error("a cluster client's Node has Abilities.Confirm")
	}
	if _, err := redlock.New([]redlock.Node{n}, redlock.Config{RestartGuard: -1, Durability: redlock.Durability{Replicas: 1}}); !errors.Is(err, redlock.ErrInvalid) {
		t.Errorf("redlock.New with Durability over a cluster client's Node: %v, want ErrInvalid", err)
	}
	if o := durable(n, false, 0); o.err == nil {
		t.Errorf("a cluster client's confirmation: %+v, want an error", o)
	}
}
