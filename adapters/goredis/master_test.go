package goredis_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/adapters/goredis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/redis/go-redis/v9"
)

// A Node is one master: a client that may spread keys over several masters,
// or merge several into one, is refused when the Node is built, before
// anything is sent.
func TestRefusesWhatIsNotOneMaster(t *testing.T) {
	three := []string{"127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"}
	for _, tc := range []struct {
		name string
		c    redis.UniversalClient
		want error // nil: accepted
	}{
		{"ring", redis.NewRing(&redis.RingOptions{Addrs: map[string]string{"a": "127.0.0.1:1", "b": "127.0.0.1:2"}}), goredis.ErrRing},
		{"universal client over three addresses", redis.NewUniversalClient(&redis.UniversalOptions{Addrs: three}), goredis.ErrSeveralMasters},
		{"cluster client with three seeds", redis.NewClusterClient(&redis.ClusterOptions{Addrs: three}), goredis.ErrSeveralMasters},
		{"universal client over one address", redis.NewUniversalClient(&redis.UniversalOptions{Addrs: three[:1]}), nil},
		{"cluster client with one seed", redis.NewClusterClient(&redis.ClusterOptions{Addrs: three[:1]}), nil},
		{"sentinel master set", redis.NewUniversalClient(&redis.UniversalOptions{Addrs: three, MasterName: "m"}), nil},
		{"sentinel master set, reads routed", redis.NewUniversalClient(&redis.UniversalOptions{Addrs: three, MasterName: "m", RouteRandomly: true}), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.c.Close()
			n, err := goredis.New(tc.c)
			if n != nil {
				defer n.Close()
			}
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("New: %v, want a Node", err)
			case tc.want != nil && (!errors.Is(err, tc.want) || n != nil):
				t.Fatalf("New = %v, %v; want no Node and %v", n, err, tc.want)
			case err != nil && !strings.HasPrefix(err.Error(), "goredis: "):
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}

	// The caller's word that several seeds are one cluster.
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: three})
	defer cc.Close()
	n, err := goredis.NewCluster(cc)
	if err != nil {
		t.Fatalf("NewCluster with three seeds: %v", err)
	}
	defer n.Close()
	if want := "cluster:" + strings.Join(three, ","); n.Addr() != want {
		t.Errorf("Addr() = %q, want %q", n.Addr(), want)
	}
}

// refusing returns a client of a loopback port where nothing listens.
// Its first dial is refused; go-redis's next dials wait until the test
// ends, so a call can end before its context only by the Node's report of
// the first.
func refusing(t *testing.T) (redis.UniversalClient, string) {
	t.Helper()
	port, err := redisproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	gate := make(chan struct{})
	var dials atomic.Int32
	c := redis.NewClient(&redis.Options{
		Addr:          addr,
		DialerRetries: 2,
		Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if dials.Add(1) > 1 {
				select {
				case <-gate:
				case <-ctx.Done():
				}
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	})
	t.Cleanup(func() { close(gate) }) // before the client closes: cleanups run last first
	return c, addr
}

// A wrong address reads "connection refused", not a timeout.
func TestReportsConnectionError(t *testing.T) {
	c, addr := refusing(t)
	n := nodeOver(t, c)
	for i := range 3 { // the first call dials; the next find the master refusing
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
		_, err := n.Do(ctx, "PING")
		cancel()
		if !errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call %d to a closed port: %v, want the refused dial's error before the deadline", i, err)
		}
		if !strings.Contains(err.Error(), addr) {
			t.Errorf("error %q does not name the master", err)
		}
	}

	// A call that ends with its context carries the last dial error.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := n.Do(ctx, "PING"); !errors.Is(err, context.Canceled) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("call with a cancelled context: %v, want Canceled with the last connection error", err)
	}

	// So does a Locker's QuorumError, from a fresh Node.
	var nodes []redlock.Node
	for range 3 {
		c, _ := refusing(t)
		nodes = append(nodes, nodeOver(t, c))
	}
	l, err := redlock.New(nodes, redlock.Config{NodeTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.TryLock(t.Context(), "job", 10*time.Second)
	var qerr *redlock.QuorumError
	if !errors.As(err, &qerr) || !errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "no answer") {
		t.Fatalf("TryLock over masters that refuse connections: %v, want a QuorumError with their connection errors", err)
	}
}
