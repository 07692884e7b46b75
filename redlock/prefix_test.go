package redlock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Config.KeyPrefix keeps every key a Locker writes apart from the
// application's data: a data key with a lock's name is neither refused
// nor touched, every key of every kind (and its derived keys) carries the
// prefix, and the names the caller sees are its own.
func TestKeyPrefix(t *testing.T) {
	_, nodes := cluster(t, 3)
	ctx := t.Context()
	for _, n := range nodes {
		if _, err := n.Do(ctx, "SET", "user:42", `{"name":"bob"}`); err != nil {
			t.Fatal(err)
		}
	}
	l := newLocker(t, asNodes(nodes), redlock.Config{KeyPrefix: "locks:", Fencing: true})
	lk, err := l.TryLock(ctx, "user:42", time.Minute)
	if err != nil {
		t.Fatalf("a lock named like a data key: %v", err)
	}
	if lk.Key() != "user:42" {
		t.Errorf("Key() = %q, want the caller's name", lk.Key())
	}
	if got := values(t, nodes, "locks:user:42"); got[0] != lk.Token() {
		t.Errorf("locks:user:42 = %v, want the token", got)
	}
	var held []*redlock.Lock
	hold := func(lk *redlock.Lock, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, lk)
	}
	hold(l.Reentrant("r", "o").TryLock(ctx, time.Minute))
	hold(l.RWMutex("rw").TryRLock(ctx, time.Minute))
	hold(l.Fair("f").TryLock(ctx, time.Minute))
	hold(l.Semaphore("s", 2).TryAcquire(ctx, time.Minute))
	multi, err := l.TryLockMulti(ctx, []string{"{m}:a", "{m}:b"}, time.Minute)
	hold(multi, err)
	if got := multi.Keys(); len(got) != 2 || got[0] != "{m}:a" || got[1] != "{m}:b" {
		t.Errorf("Keys() = %v, want the caller's names", got)
	}
	for _, n := range nodes {
		keys, err := redis.Strings(n.Do(ctx, "KEYS", "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if k != "user:42" && !strings.HasPrefix(k, "locks:") && !strings.HasPrefix(k, "{locks:") {
				t.Errorf("%s holds %q, outside the prefix", n.Addr(), k)
			}
		}
		if v, _ := redis.String(n.Do(ctx, "GET", "user:42")); v != `{"name":"bob"}` {
			t.Errorf("the data key was touched: %q", v)
		}
	}
	// A waiter in another Locker with the same prefix is woken by the
	// release announced under the prefix.
	other := newLocker(t, asNodes(nodes), redlock.Config{KeyPrefix: "locks:", Retry: redlock.ExponentialBackoff{Base: time.Minute, Max: time.Minute}})
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		w, err := other.Lock(wctx, "user:42", time.Minute)
		if err == nil {
			w.Unlock(ctx)
		}
		got <- err
	}()
	await(t, "the waiter subscribed", func() bool { return numSubscribed(t, nodes[0], redlock.ReleaseChannel("locks:user:42")) > 0 })
	if err := lk.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter under the same prefix: %v", err)
	}
	for _, h := range held {
		if err := h.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// numSubscribed is how many subscribers channel has on n.
func numSubscribed(t *testing.T, n *pool.Node, channel string) int64 {
	t.Helper()
	vs, err := redis.Values(n.Do(t.Context(), "PUBSUB", "NUMSUB", channel))
	if err != nil || len(vs) != 2 {
		t.Fatalf("PUBSUB NUMSUB: %v, %v", vs, err)
	}
	c, _ := redis.Int64(vs[1], nil)
	return c
}
