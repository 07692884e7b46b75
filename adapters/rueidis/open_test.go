package rueidis_test

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/redis/rueidis"
)

// A Node made by Open is built while its master is down, fails its calls
// with the connection's error meanwhile, and works once the master is up.
func TestOpenWithMasterDown(t *testing.T) {
	port, err := redisproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	n := openNode(t, addr)
	if n.Addr() != addr {
		t.Errorf("Addr() = %q, want %q", n.Addr(), addr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := n.Do(ctx, "PING"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("Do while the master is down: %v, want connection refused", err)
	}
	redistest.Start(t, 1, redisproc.Options{Port: port})
	if got, err := n.Do(ctx, "PING"); err != nil || got != "PONG" {
		t.Fatalf("Do once the master is up: %v, %v; want PONG", got, err)
	}
	unsub, err := n.Subscribe(ctx, "c", make(chan struct{}, 1))
	if err != nil {
		t.Fatalf("Subscribe once the master is up: %v", err)
	}
	unsub()
}

func TestOpenRefusesUnsafeOptions(t *testing.T) {
	for name, opt := range map[string]rueidis.ClientOption{
		"conn lifetime":    {InitAddress: []string{"127.0.0.1:1"}, ConnLifetime: time.Minute},
		"replica only":     {InitAddress: []string{"127.0.0.1:1"}, ReplicaOnly: true},
		"send to replicas": {InitAddress: []string{"127.0.0.1:1"}, SendToReplicas: func(rueidis.Completed) bool { return true }},
	} {
		if n, err := rueidisnode.Open(opt); !errors.Is(err, rueidisnode.ErrUnsafeOption) {
			t.Errorf("Open with %s: %v, %v; want ErrUnsafeOption", name, n, err)
		}
	}
	if _, err := rueidisnode.Open(rueidis.ClientOption{}); err == nil {
		t.Error("Open without an address: no error")
	}
	for _, tc := range []struct {
		opt  rueidis.ClientOption
		want string
	}{
		{rueidis.ClientOption{InitAddress: []string{"b:1", "a:1"}}, "cluster:a:1,b:1"},
		{rueidis.ClientOption{InitAddress: []string{"s:1"}, Sentinel: rueidis.SentinelOption{MasterSet: "m"}}, "sentinel:m@s:1"},
	} {
		n, err := rueidisnode.Open(tc.opt)
		if err != nil {
			t.Fatal(err)
		}
		if n.Addr() != tc.want {
			t.Errorf("Addr() = %q, want %q", n.Addr(), tc.want)
		}
		n.Close()
	}
}
