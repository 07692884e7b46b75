package redlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/redlock"
)

// inMulti is a master reached over a connection of its own that was put in
// MULTI: every command it is sent is queued, and the real master answers
// "QUEUED" instead of running it.
type inMulti struct {
	addr string
	mu   sync.Mutex
	c    redis.Conn
}

func newInMulti(t *testing.T, addr string) *inMulti {
	t.Helper()
	c, err := redis.Dial("tcp", addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("MULTI"); err != nil {
		t.Fatal(err)
	}
	m := &inMulti{addr: addr, c: c}
	t.Cleanup(func() {
		m.mu.Lock() // calls of a failed attempt's clean-up may still run
		defer m.mu.Unlock()
		c.Do("DISCARD")
		c.Close()
	})
	return m
}

func (m *inMulti) Addr() string { return m.addr }

func (m *inMulti) Do(_ context.Context, cmd string, args ...any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.c.Do(cmd, args...)
}

func (m *inMulti) Eval(_ context.Context, _, src string, keys []string, args ...any) (any, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := []any{src, len(keys)}
	for _, k := range keys {
		a = append(a, k)
	}
	return m.c.Do("EVAL", append(a, args...)...)
}

// Defect 2 of issue 8: a vote is a grant only when the reply is the one the
// command or script defines as a grant. A master whose connection is stuck
// in MULTI answers "QUEUED" to everything; that is an error vote, never a
// grant, for every lock kind.
func TestQueuedReplyIsNoGrant(t *testing.T) {
	servers, _ := cluster(t, 3)
	nodes := make([]redlock.Node, len(servers))
	for i, s := range servers {
		nodes[i] = newInMulti(t, s.Addr())
	}
	for _, cfg := range []redlock.Config{{}, {Fencing: true}} {
		l := newLocker(t, nodes, cfg)
		acquire := map[string]func() (*redlock.Lock, error){
			"TryLock":           func() (*redlock.Lock, error) { return l.TryLock(t.Context(), "k", time.Minute) },
			"Reentrant.TryLock": func() (*redlock.Lock, error) { return l.Reentrant("r", "o").TryLock(t.Context(), time.Minute) },
			"RWMutex.TryLock":   func() (*redlock.Lock, error) { return l.RWMutex("w").TryLock(t.Context(), time.Minute) },
			"RWMutex.TryRLock":  func() (*redlock.Lock, error) { return l.RWMutex("w").TryRLock(t.Context(), time.Minute) },
		}
		for name, f := range acquire {
			lk, err := f()
			var qerr *redlock.QuorumError
			if !errors.Is(err, redlock.ErrNotAcquired) || !errors.As(err, &qerr) || qerr.Granted != 0 || qerr.Failed < 2 {
				t.Fatalf("fencing=%v %s on masters answering QUEUED: lock %v, err %v; want failed votes", cfg.Fencing, name, lk, err)
			}
		}
	}
}
