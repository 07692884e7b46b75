package goredis_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

func TestConformance(t *testing.T) {
	redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node { return newNode(t, addr) })
}

// TestShortReadTimeoutLateAcquire is issue 22 item 9: over a go-redis
// client with a ReadTimeout shorter than a late acquire's delay, the
// client closes the connection that carries the acquire, and the Unlock's
// release goes out on a new one and reaches the master first. The
// release's tombstone must refuse the acquire when it lands: the key may
// not stay on that master.
func TestShortReadTimeoutLateAcquire(t *testing.T) {
	if len(masters) < 3 {
		t.Skip("needs three redis-servers")
	}
	const late = 1500 * time.Millisecond
	key := "short-read-timeout-" + t.Name()
	d := redlocktest.NewDelayer(t, masters[2], key, late)
	addrs := []string{masters[0], masters[1], d.Addr()}
	nodes := make([]redlock.Node, len(addrs))
	for i, addr := range addrs {
		nodes[i] = nodeOver(t, redis.NewClient(&redis.Options{Addr: addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: -1}))
		if _, err := nodes[i].Do(context.Background(), "PING"); err != nil {
			t.Fatal(err)
		}
	}
	l, err := redlock.New(nodes, redlock.Config{NodeTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lk, err := l.TryLock(ctx, key, time.Minute)
	if err != nil {
		t.Fatalf("TryLock with two of three masters in time: %v", err)
	}
	if err := lk.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	control := redis.NewClient(&redis.Options{Addr: masters[2]})
	defer control.Close()
	deadline := time.Now().Add(late + 5*time.Second)
	for !d.Delivered() {
		if time.Now().After(deadline) {
			t.Fatal("the delayed acquire never reached the master")
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // it runs once it arrived
	// A release behind it on the same connection (or a retry) follows
	// it; a lock left behind stays for its TTL, a minute.
	for v, err := control.Get(ctx, key).Result(); err != redis.Nil; v, err = control.Get(ctx, key).Result() {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %q (%v) on the late master after Unlock returned: the acquire landed after the release", key, v, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if d.Closed() == 0 {
		t.Error("go-redis kept the connection that carried the late acquire: the test did not meet the overtaking it is for")
	}
}
