package pool_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/faultproxy"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// slowLink is the one-way delay of the slow link: a round trip of 30ms
// more than loopback's, so that connect + AUTH + SELECT take over 60ms,
// more than redlock's default 50ms node timeout, and one command less.
const slowLink = 15 * time.Millisecond

// Over a slow link, connection set-up outlasts the per-call timeout: the
// calls that started it fail fast, the dial goes on, and once it is up a
// TryLock with the default node timeout succeeds.
func TestSlowLinkSetUp(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		cfg.DB = 3
		p, n, direct := proxied(t, redisproc.Options{Password: "s3cret"}, cfg)
		p.SetLatency(slowLink)
		l, err := redlock.New([]redlock.Node{n}, redlock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		// A fresh key per attempt: an attempt that timed out may have been
		// applied and its release may have failed, which leaves its key
		// behind for the TTL (correctly).
		var (
			lk  *redlock.Lock
			key string
		)
		for i, deadline := 0, time.Now().Add(20*time.Second); lk == nil; i++ {
			if time.Now().After(deadline) {
				t.Fatalf("no TryLock succeeded over a %v round trip: %v", 2*slowLink, err)
			}
			key = "job" + strconv.Itoa(i)
			lk, err = l.TryLock(t.Context(), key, 10*time.Second)
		}
		// The lock is in the configured database, behind the password.
		if got, err := redis.Int(direct.Do(t.Context(), "EXISTS", key)); err != nil || got != 1 {
			t.Fatalf("EXISTS %s in db 3 = %d, %v; want 1", key, got, err)
		}
		// The pipelined connection outlives the calls that time out on it
		// (their replies are read and dropped); a pooled connection whose
		// call timed out is closed, so the Pooled mode may dial again.
		if got := p.Accepted(); !cfg.Pooled && got > 2 {
			t.Fatalf("the proxy accepted %d connections, want the dial to survive its callers", got)
		}
	})
}

// A caller that gives up leaves the dial running; the next caller uses the
// connection it made.
func TestDialOutlivesCaller(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		cfg.DB = 1
		p, n, _ := proxied(t, redisproc.Options{}, cfg)
		p.SetLatency(slowLink)
		ctx, cancel := context.WithTimeout(t.Context(), time.Millisecond)
		_, err := n.Do(ctx, "PING")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("PING with 1ms to live: %v, want DeadlineExceeded", err)
		}
		if got, err := n.Do(t.Context(), "PING"); err != nil || got != "PONG" {
			t.Fatalf("PING = %v, %v", got, err)
		}
		if got := p.Accepted(); got != 1 {
			t.Fatalf("the proxy accepted %d connections, want the first dial's only", got)
		}
	})
}

// A failed dial is reported to every caller that waited for it, also to
// those without a deadline.
func TestFailedDialReported(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		port, err := redisproc.FreePort() // nobody listens there
		if err != nil {
			t.Fatal(err)
		}
		cfg.Addr = "127.0.0.1:" + strconv.Itoa(port)
		n := pool.New(cfg)
		defer n.Close()
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := n.Do(context.Background(), "PING"); !errors.Is(err, syscall.ECONNREFUSED) {
					t.Errorf("PING to a closed port: %v, want ECONNREFUSED", err)
				}
			})
		}
		wg.Wait()
	})
}

// A frozen master accepts the connection and never answers AUTH or SELECT:
// a caller without deadline gets the dial's own timeout, and Close stops a
// dial in progress (TestMain checks that no goroutine is left).
func TestDialTimeoutAndClose(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		cfg.DB, cfg.DialTimeout = 2, 100*time.Millisecond
		srv, n := start(t, redisproc.Options{}, cfg)
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		defer srv.Resume()
		if _, err := n.Do(context.Background(), "PING"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("PING to a frozen master: %v, want the dial's DeadlineExceeded", err)
		}

		cfg.Addr, cfg.DialTimeout = srv.Addr(), time.Hour
		n2 := pool.New(cfg)
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if _, err := n2.Do(ctx, "PING"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("PING to a frozen master: %v, want DeadlineExceeded", err)
		}
		closed := make(chan struct{})
		go func() { n2.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Close did not stop the dial in progress")
		}
	})
}

// In the Pooled mode, callers that find no idle connection dial at once,
// each its own: a burst of callers is not served one dial after the other,
// which kept them waiting past a 50ms node timeout (Pooled benchmark turns
// with 64 goroutines hung on the Unlocks that failed so). The master is
// frozen, so every dial stays in its SELECT; all eight are under way at
// once, and each caller gets its PING answered once the master is back.
func TestPooledCallersDialConcurrently(t *testing.T) {
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	p, err := faultproxy.Start(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	n := pool.New(pool.Config{Addr: p.Addr(), DB: 1, Pooled: true, DialTimeout: time.Minute})
	t.Cleanup(func() { n.Close() })
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	resume := sync.OnceFunc(func() {
		if err := srv.Resume(); err != nil {
			t.Error(err)
		}
	})
	defer resume()
	const callers = 8
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			if got, err := n.Do(context.Background(), "PING"); err != nil || got != "PONG" {
				t.Errorf("PING = %v, %v", got, err)
			}
		})
	}
	eventually(t, func() (bool, string) {
		got := p.Accepted()
		return got == callers, fmt.Sprintf("%d dials under way while %d callers wait", got, callers)
	})
	resume()
	wg.Wait()
	if got := p.Accepted(); got != callers {
		t.Fatalf("%d connections dialed for %d callers", got, callers)
	}
}
