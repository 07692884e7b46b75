package goredis_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/adapters/goredis"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/redis/go-redis/v9"
)

// newNode returns a Node over a new plain client of addr; both close at the
// end of t.
func newNode(t *testing.T, addr string) *goredis.Node {
	t.Helper()
	return nodeOver(t, redis.NewClient(&redis.Options{Addr: addr}))
}

func nodeOver(t *testing.T, c redis.UniversalClient) *goredis.Node {
	t.Helper()
	n, err := goredis.New(c)
	if err != nil {
		c.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.Close()
		c.Close()
	})
	return n
}

func TestReplies(t *testing.T) {
	n := newNode(t, redlocktest.NewMaster(t).Addr())
	ctx := context.Background()
	for _, tc := range []struct {
		cmd  string
		args []any
		want any
	}{
		{"SET", []any{"k", "v"}, "OK"},
		{"GET", []any{"k"}, "v"},
		{"GET", []any{"missing"}, nil},
		{"INCR", []any{"n"}, int64(1)},
	} {
		got, err := n.Do(ctx, tc.cmd, tc.args...)
		if err != nil || got != tc.want {
			t.Errorf("Do(%s %v) = %#v, %v; want %#v", tc.cmd, tc.args, got, err, tc.want)
		}
	}
	_, err := n.Do(ctx, "INCR", "k")
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		t.Errorf("INCR of a string: err %v, want a redis.Error", err)
	}
}

func TestEvalFallsBackOnNoScript(t *testing.T) {
	addr := redlocktest.NewMaster(t).Addr()
	n := newNode(t, addr)
	ctx := context.Background()
	src := "return redis.call('INCR', KEYS[1]) + tonumber(ARGV[1])"
	hash := "x" // wrong on purpose: the master answers NOSCRIPT
	got, err := n.Eval(ctx, hash, src, []string{"c"}, 10)
	if err != nil || got != int64(11) {
		t.Fatalf("Eval = %v, %v; want 11", got, err)
	}
	_, err = n.Eval(ctx, hash, "return redis.call('NOPE')", nil)
	var rerr redis.Error
	if !errors.As(err, &rerr) {
		t.Errorf("script error: err %v, want a redis.Error", err)
	}
}

// A command whose reply is lost is not sent again, even by a client
// configured to retry: the master has run it once.
func TestNoResend(t *testing.T) {
	addr := redlocktest.NewMaster(t).Addr()
	proxy := redlocktest.NewReplyDropper(t, addr, "resend-probe")
	n := nodeOver(t, redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: 5}))
	ctx := context.Background()
	if _, err := n.Do(ctx, "INCR", "resend-probe"); err == nil {
		t.Fatal("INCR through a proxy that drops its reply: no error")
	}
	src := "return redis.call('INCR', KEYS[1])"
	sum := sha1.Sum([]byte(src))
	hash := hex.EncodeToString(sum[:])
	if _, err := newNode(t, addr).Do(ctx, "SCRIPT", "LOAD", src); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Eval(ctx, hash, src, []string{"resend-probe-script"}); err == nil {
		t.Fatal("EVAL through a proxy that drops its reply: no error")
	}
	direct := newNode(t, addr)
	for _, key := range []string{"resend-probe", "resend-probe-script"} {
		if got, err := direct.Do(ctx, "GET", key); err != nil || got != "1" {
			t.Errorf("GET %s = %v, %v; want 1 (sent once)", key, got, err)
		}
	}
}

func TestContextBoundsCall(t *testing.T) {
	n := newNode(t, redlocktest.NewBlackHole(t))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := n.Do(ctx, "GET", "k"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Do to a master that never answers: err %v, want DeadlineExceeded", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := n.Eval(ctx, "x", "return 1", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Eval with a cancelled context: err %v, want Canceled", err)
	}
}

func TestSubscribe(t *testing.T) {
	addr := redlocktest.NewMaster(t).Addr()
	n := newNode(t, addr)
	pub := newNode(t, addr)
	ctx := context.Background()
	a, b := make(chan struct{}, 1), make(chan struct{}, 1)
	unsubA, err := n.Subscribe(ctx, "ch", a)
	if err != nil {
		t.Fatal(err)
	}
	unsubB, err := n.Subscribe(ctx, "ch", b)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := pub.Do(ctx, "PUBLISH", "ch", "x"); got != int64(1) {
		t.Errorf("PUBLISH reached %v subscribers, want 1 (one shared connection)", got)
	}
	<-a
	<-b
	unsubA()
	unsubA() // idempotent
	if _, err := pub.Do(ctx, "PUBLISH", "ch", "x"); err != nil {
		t.Fatal(err)
	}
	<-b
	unsubB()
	// The last unsubscribe retires the connection; a new Subscribe opens another.
	c := make(chan struct{}, 1)
	unsubC, err := n.Subscribe(ctx, "other", c)
	if err != nil {
		t.Fatal(err)
	}
	defer unsubC()
	if got, _ := pub.Do(ctx, "PUBLISH", "ch", "x"); got != int64(0) {
		t.Errorf("PUBLISH ch after its last unsubscribe reached %v subscribers, want 0", got)
	}
	pub.Do(ctx, "PUBLISH", "other", "x")
	<-c
}

func TestSubscribeEndsWithContext(t *testing.T) {
	n := newNode(t, "127.0.0.1:1") // nothing listens
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := n.Subscribe(ctx, "ch", make(chan struct{}, 1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Subscribe to a closed port: err %v, want DeadlineExceeded", err)
	}
}

// A whole Redis Cluster is one master: a lock's keys share a hash tag. It
// has no one process, so the restart guard cannot apply (see
// TestIdentityCluster): the Locker turns it off.
func TestClusterClient(t *testing.T) {
	addr := redlocktest.NewClusterMaster(t).Addr()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}})
	n := nodeOver(t, cc)
	if want := "cluster:" + addr; n.Addr() != want {
		t.Errorf("Addr() = %q, want %q", n.Addr(), want)
	}
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{Fencing: true, RestartGuard: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lk, err := l.Lock(ctx, "job", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.TryLock(ctx, "job", 10*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Errorf("TryLock of a held lock: %v, want ErrNotAcquired", err)
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

func TestAddr(t *testing.T) {
	if got := newNode(t, "127.0.0.1:6399").Addr(); got != "127.0.0.1:6399" {
		t.Errorf("Addr() = %q", got)
	}
	f1 := nodeOver(t, redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}}))
	f2 := nodeOver(t, redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{"127.0.0.1:1"}}))
	if f1.Addr() == f2.Addr() {
		t.Errorf("two failover clients share Addr %q", f1.Addr())
	}
}
