package valkeygo_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/adapters/valkeygo"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/valkey-io/valkey-go"
)

// What the conformance suite cannot see: New over a client of the
// caller's, an error reply that matches *valkey.ValkeyError with the
// master's message, a command the builder refuses, a cluster client.

// nodeOver returns a Node made by New over a new client with opt; both
// close at the end of t.
func nodeOver(t *testing.T, opt valkey.ClientOption) *valkeygo.Node {
	t.Helper()
	c, err := valkey.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	n := valkeygo.New(c)
	t.Cleanup(func() {
		n.Close()
		c.Close()
	})
	return n
}

func TestNew(t *testing.T) {
	addr := redlocktest.NewMaster(t).Addr()
	n := nodeOver(t, valkey.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableRetry: true})
	if n.Addr() != addr {
		t.Errorf("Addr() = %q, want %q", n.Addr(), addr)
	}
	ctx := t.Context()
	if got, err := n.Do(ctx, "SET", "k", "v"); err != nil || got != "OK" {
		t.Fatalf("SET = %v, %v", got, err)
	}
	for _, tc := range []struct {
		cmd    []any
		prefix string
	}{
		{[]any{"NOSUCHCOMMAND"}, "ERR unknown command"},
		{[]any{"LPUSH", "k", "x"}, "WRONGTYPE "},
	} {
		_, err := n.Do(ctx, tc.cmd[0].(string), tc.cmd[1:]...)
		var verr *valkey.ValkeyError
		if !errors.As(err, &verr) || !strings.HasPrefix(err.Error(), tc.prefix) {
			t.Errorf("Do%v: %v, want a *valkey.ValkeyError beginning %q", tc.cmd, err, tc.prefix)
		}
	}
	// The builder's refusals are errors, not panics, and send nothing.
	var verr *valkey.ValkeyError
	if _, err := n.Do(ctx, "SUBSCRIBE", "ch"); err == nil || errors.As(err, &verr) {
		t.Errorf("Do(SUBSCRIBE): %v, want a non-reply error", err)
	}
}

// A whole cluster is one master: a lock's keys share a hash tag.
func TestClusterClient(t *testing.T) {
	addr := redlocktest.NewClusterMaster(t).Addr()
	n := nodeOver(t, valkey.ClientOption{InitAddress: []string{addr}, DisableRetry: true})
	if want := "cluster:" + addr; n.Addr() != want {
		t.Errorf("Addr() = %q, want %q", n.Addr(), want)
	}
	ctx := t.Context()
	if _, err := n.Eval(ctx, "x", "return 1", []string{"a", "b"}); err == nil {
		t.Error("Eval with keys in two slots on a cluster: no error")
	}
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{Fencing: true})
	if err != nil {
		t.Fatal(err)
	}
	lk, err := l.Lock(ctx, "job", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	unsub, err := n.Subscribe(ctx, redlock.ReleaseChannel("job"), ch)
	if err != nil {
		t.Fatal(err)
	}
	defer unsub()
	if err := lk.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-ch // the release was announced through the cluster's pub/sub
}

// A Node made by Open is built while its master is down, fails its calls
// with the connection's error meanwhile, and works once the master is up.
func TestOpenWithMasterDown(t *testing.T) {
	port, err := redisproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	n := openNode(t, addr)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := n.Do(ctx, "PING"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Do while the master is down: %v, want connection refused", err)
	}
	redistest.Start(t, 1, redisproc.Options{Port: port})
	if got, err := n.Do(ctx, "PING"); err != nil || got != "PONG" {
		t.Fatalf("Do once the master is up: %v, %v; want PONG", got, err)
	}
}

func TestOpenRefusesUnsafeOptions(t *testing.T) {
	for name, opt := range map[string]valkey.ClientOption{
		"conn lifetime":    {InitAddress: []string{"127.0.0.1:1"}, ConnLifetime: time.Minute},
		"replica only":     {InitAddress: []string{"127.0.0.1:1"}, ReplicaOnly: true},
		"send to replicas": {InitAddress: []string{"127.0.0.1:1"}, SendToReplicas: func(valkey.Completed) bool { return true }},
	} {
		if n, err := valkeygo.Open(opt); !errors.Is(err, valkeygo.ErrUnsafeOption) {
			t.Errorf("Open with %s: %v, %v; want ErrUnsafeOption", name, n, err)
		}
	}
	if _, err := valkeygo.Open(valkey.ClientOption{}); err == nil {
		t.Error("Open without an address: no error")
	}
	n, err := valkeygo.Open(valkey.ClientOption{InitAddress: []string{"s:1"}, Sentinel: valkey.SentinelOption{MasterSet: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if want := "sentinel:m@s:1"; n.Addr() != want {
		t.Errorf("Addr() = %q, want %q", n.Addr(), want)
	}
}
