package pool_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/pool"
)

// Concurrent callers share one pipelined connection and each gets the reply
// to its own command.
func TestPipelineMatchesReplies(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{})
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 50 {
				key, val := fmt.Sprintf("k%d", g), fmt.Sprintf("v%d.%d", g, i)
				if _, err := n.Do(t.Context(), "SET", key, val); err != nil {
					t.Error(err)
					return
				}
				if got, err := redis.String(n.Do(t.Context(), "GET", key)); err != nil || got != val {
					t.Errorf("GET %s = %q, %v; want %q", key, got, err, val)
					return
				}
			}
		})
	}
	wg.Wait()
	if s := n.Stats(); s.Active != 1 {
		t.Fatalf("Stats = %+v, want exactly the one pipelined connection", s)
	}
	clients, err := redis.String(n.Do(t.Context(), "CLIENT", "LIST"))
	if err != nil {
		t.Fatal(err)
	}
	if c := countLines(clients); c != 1 {
		t.Fatalf("%s has %d client connections, want 1:\n%s", srv.Addr(), c, clients)
	}
}

func countLines(s string) int {
	c := 0
	for _, r := range s {
		if r == '\n' {
			c++
		}
	}
	return c
}

// A frozen master: callers end at their deadlines, the stalled connection
// is dropped after StallTimeout, and after resume the next callers get
// their own replies on a new connection.
func TestPipelineStall(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{StallTimeout: time.Second})
	if _, err := n.Do(t.Context(), "SET", "k", "before"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
		_, err := n.Do(ctx, "SET", "k", "during")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("call on a frozen master: %v, want DeadlineExceeded", err)
		}
	}
	// Without a deadline of its own, a caller ends when the connection is
	// declared stalled.
	if _, err := n.Do(context.Background(), "GET", "k"); err == nil {
		t.Fatal("a call without deadline on a frozen master succeeded")
	}
	srv.Resume()
	for i := range 10 {
		want := fmt.Sprint("after", i)
		if _, err := n.Do(t.Context(), "SET", "k2", want); err != nil {
			t.Fatal(err)
		}
		if got, err := redis.String(n.Do(t.Context(), "GET", "k2")); err != nil || got != want {
			t.Fatalf("after resume: GET = %q, %v; want %q", got, err, want)
		}
	}
}

// A killed master fails the callers at once and the pipeline redials when
// it is back.
func TestPipelineRedials(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{})
	if _, err := n.Do(t.Context(), "PING"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Do(t.Context(), "PING"); err == nil {
		t.Fatal("PING to a killed master succeeded")
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if got, err := redis.String(n.Do(t.Context(), "PING")); err != nil || got != "PONG" {
		t.Fatalf("PING after restart = %q, %v", got, err)
	}
}

// A master restarted while the pipelined connection sat idle: the writer
// finds the connection closed before it writes the next command to it, so
// that command goes out once, on a new connection, and does not fail. (A
// command written to a connection that then breaks is never sent again:
// see TestNoResendAfterLostReply.)
func TestPipelineSurvivesIdleRestart(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{})
	if _, err := n.Do(t.Context(), "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := srv.Restart(0); err != nil {
			t.Fatal(err)
		}
		// The restarted master is empty: 1 means the INCR ran once. Under
		// load the kernel may deliver the old socket's close only after the
		// idle check looked: the command is then written to it and fails,
		// unsent to any master, and the next one goes out on a new
		// connection.
		got, err := n.Do(t.Context(), "INCR", "n")
		if err != nil {
			got, err = n.Do(t.Context(), "INCR", "n")
		}
		if err != nil || got != int64(1) {
			t.Fatalf("restart %d: first INCR = %v, %v; want 1", i, got, err)
		}
	}
}

// The same for a connection reset while idle (a middlebox, CLIENT KILL).
func TestPipelineSurvivesIdleReset(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		p, n, direct := proxied(t, redisproc.Options{}, cfg)
		for i := range 3 {
			if _, err := n.Do(t.Context(), "PING"); err != nil {
				t.Fatal(err)
			}
			p.ResetAll()
			// Wait until the reset has reached the node's side of the proxy:
			// the master no longer lists the proxy's connection.
			for deadline := time.Now().Add(10 * time.Second); ; {
				list, err := redis.String(direct.Do(t.Context(), "CLIENT", "LIST"))
				if err != nil {
					t.Fatal(err)
				}
				if countLines(list) == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the reset connection is still open:\n%s", list)
				}
				runtime.Gosched()
			}
			// As after a restart (see above), the reset may reach the
			// client's socket only after the idle check: that INCR fails
			// without reaching the master, and the next one counts.
			got, err := n.Do(t.Context(), "INCR", "n")
			if err != nil {
				got, err = n.Do(t.Context(), "INCR", "n")
			}
			if err != nil || got != int64(i+1) {
				t.Fatalf("reset %d: INCR = %v, %v; want %d", i, got, err, i+1)
			}
		}
	})
}
