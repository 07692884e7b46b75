package rueidis_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
	"time"

	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/redis/rueidis"
)

// options are the client options the tests use, as the README advises:
// no retries, no connection lifetime, no client-side cache.
func options(addrs ...string) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: addrs, DisableRetry: true, DisableCache: true}
}

// newNode returns a Node over a new standalone client of addr; both close
// at the end of t.
func newNode(t *testing.T, addr string) *rueidisnode.Node {
	t.Helper()
	opt := options(addr)
	opt.ForceSingleClient = true
	return nodeOver(t, opt)
}

// nodeOver returns a Node over a new client with opt; both close at the
// end of t.
func nodeOver(t *testing.T, opt rueidis.ClientOption) *rueidisnode.Node {
	t.Helper()
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatal(err)
	}
	n := rueidisnode.New(c)
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
		{"INCRBY", []any{"n", int64(2)}, int64(3)},
		{"SET", []any{"b", []byte("bytes")}, "OK"},
		{"GET", []any{"b"}, "bytes"},
	} {
		got, err := n.Do(ctx, tc.cmd, tc.args...)
		if err != nil || got != tc.want {
			t.Errorf("Do(%s %v) = %#v, %v; want %#v", tc.cmd, tc.args, got, err, tc.want)
		}
	}
	_, err := n.Do(ctx, "INCR", "k")
	var rerr *rueidis.RedisError
	if !errors.As(err, &rerr) {
		t.Errorf("INCR of a string: err %v, want a *rueidis.RedisError", err)
	}
	// The builder's refusals are errors, not panics, and send nothing.
	if _, err := n.Do(ctx, "SUBSCRIBE", "ch"); err == nil || errors.As(err, &rerr) {
		t.Errorf("Do(SUBSCRIBE): err %v, want a non-Redis error", err)
	}
}

func TestEvalFallsBackOnNoScript(t *testing.T) {
	n := newNode(t, redlocktest.NewMaster(t).Addr())
	ctx := context.Background()
	src := "return redis.call('INCR', KEYS[1]) + tonumber(ARGV[1])"
	hash := "x" // wrong on purpose: the master answers NOSCRIPT
	got, err := n.Eval(ctx, hash, src, []string{"c"}, 10)
	if err != nil || got != int64(11) {
		t.Fatalf("Eval = %v, %v; want 11", got, err)
	}
	got, err = n.EvalPrepared(ctx, src, []any{hash, 1, "c", 10})
	if err != nil || got != int64(12) {
		t.Fatalf("EvalPrepared = %v, %v; want 12", got, err)
	}
	_, err = n.Eval(ctx, hash, "return redis.call('NOPE')", nil)
	var rerr *rueidis.RedisError
	if !errors.As(err, &rerr) {
		t.Errorf("script error: err %v, want a *rueidis.RedisError", err)
	}
	if _, err := n.EvalPrepared(ctx, src, []any{hash, 3, "c"}); err == nil {
		t.Error("EvalPrepared with more keys than arguments: no error")
	}
}

// A command whose reply is lost is not sent again, even by a client that
// retries (DisableRetry false): the master has run it once.
func TestNoResend(t *testing.T) {
	addr := redlocktest.NewMaster(t).Addr()
	proxy := redlocktest.NewReplyDropper(t, addr, "resend-probe")
	opt := rueidis.ClientOption{InitAddress: []string{proxy.Addr()}, ForceSingleClient: true, DisableCache: true}
	n := nodeOver(t, opt)
	ctx := context.Background()
	if _, err := n.Do(ctx, "INCR", "resend-probe"); err == nil {
		t.Fatal("INCR through a proxy that drops its reply: no error")
	}
	src := "return redis.call('INCR', KEYS[1])"
	sum := sha1.Sum([]byte(src))
	hash := hex.EncodeToString(sum[:])
	direct := newNode(t, addr)
	if _, err := direct.Do(ctx, "SCRIPT", "LOAD", src); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Eval(ctx, hash, src, []string{"resend-probe-script"}); err == nil {
		t.Fatal("EVALSHA through a proxy that drops its reply: no error")
	}
	for _, key := range []string{"resend-probe", "resend-probe-script"} {
		if got, err := direct.Do(ctx, "GET", key); err != nil || got != "1" {
			t.Errorf("GET %s = %v, %v; want 1 (sent once)", key, got, err)
		}
	}
}

// A call returns when its context ends, not when the master answers.
func TestContextBoundsCall(t *testing.T) {
	n := newNode(t, redlocktest.NewMaster(t, "--enable-debug-command", "yes").Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := n.Do(ctx, "DEBUG", "SLEEP", "3")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Do to a master busy for 3s: err %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Do returned after %v, when the master answered, not when its context ended", d)
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
	awaitZero(t, pub, "ch")
	pub.Do(ctx, "PUBLISH", "other", "x")
	<-c
}

// awaitZero waits until no connection is subscribed to channel.
func awaitZero(t *testing.T, n *rueidisnode.Node, channel string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := n.Do(context.Background(), "PUBSUB", "NUMSUB", channel)
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := r.([]any); ok && len(a) == 2 && a[1] == int64(0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("PUBSUB NUMSUB %s = %v, want 0", channel, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestSubscribeEndsWithContext(t *testing.T) {
	opt := options("127.0.0.1:1") // nothing listens
	opt.ForceSingleClient = true  // a client even though the dial failed
	c, _ := rueidis.NewClient(opt)
	n := rueidisnode.New(c)
	defer c.Close()
	defer n.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := n.Subscribe(ctx, "ch", make(chan struct{}, 1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Subscribe to a closed port: err %v, want DeadlineExceeded", err)
	}
}

// A whole Redis Cluster is one master: a lock's keys share a hash tag.
func TestClusterClient(t *testing.T) {
	addr := redlocktest.NewClusterMaster(t).Addr()
	n := nodeOver(t, options(addr))
	if want := "cluster:" + addr; n.Addr() != want {
		t.Errorf("Addr() = %q, want %q", n.Addr(), want)
	}
	ctx := context.Background()
	// Keys in different slots are refused before anything is sent.
	if _, err := n.Eval(ctx, "x", "return 1", []string{"a", "b"}); err == nil {
		t.Error("Eval with keys in two slots on a cluster: no error")
	}
	// A Node made by New cannot tell which master process answers: the
	// restart guard must be off (and a cluster has no one process anyway).
	l, err := redlock.New([]redlock.Node{n}, redlock.Config{Fencing: true, RestartGuard: -1})
	if err != nil {
		t.Fatal(err)
	}
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
	addr := redlocktest.NewMaster(t).Addr()
	if got := newNode(t, addr).Addr(); got != addr {
		t.Errorf("Addr() = %q, want %q", got, addr)
	}
}

// An error reply keeps the master's message, ERR prefix included, which
// rueidis itself drops.
func TestErrorReplyMessage(t *testing.T) {
	n := newNode(t, redlocktest.NewMaster(t).Addr())
	ctx := context.Background()
	n.Do(ctx, "SET", "s", "v")
	for _, tc := range []struct {
		cmd    []any
		prefix string
	}{
		{[]any{"NOSUCHCOMMAND"}, "ERR unknown command"},
		{[]any{"LPUSH", "s", "x"}, "WRONGTYPE "},
		{[]any{"EVALSHA", "x", 0}, "NOSCRIPT "},
	} {
		_, err := n.Do(ctx, tc.cmd[0].(string), tc.cmd[1:]...)
		var rerr *rueidis.RedisError
		if !errors.As(err, &rerr) || !strings.HasPrefix(err.Error(), tc.prefix) {
			t.Errorf("Do%v: err %v, want a *rueidis.RedisError beginning %q", tc.cmd, err, tc.prefix)
		}
	}
}
