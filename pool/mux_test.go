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
	"github.com/quorumlock/quorumlock/quorum"
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

// clientID is the master's id of the connection n's calls go out on.
func clientID(t *testing.T, n *pool.Node) int64 {
	t.Helper()
	id, err := redis.Int64(n.Do(t.Context(), "CLIENT", "ID"))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A caller that gives up before its reply arrives leaves its command in
// the pipeline, whose reply is read first and dropped: the caller after
// it, written behind it, gets its own reply, on the same connection.
func TestGivenUpCallKeepsRepliesInStep(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{StallTimeout: time.Minute})
	id := clientID(t, n)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Resume() })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	_, err := n.Do(ctx, "ECHO", "first")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call on a frozen master: %v, want DeadlineExceeded", err)
	}
	type reply struct {
		s   string
		err error
	}
	second := make(chan reply, 1)
	go func() {
		s, err := redis.String(n.Do(t.Context(), "ECHO", "second"))
		second <- reply{s, err}
	}()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if got := <-second; got.err != nil || got.s != "second" {
		t.Fatalf("the call behind the one given up got %q, %v; want its own reply", got.s, got.err)
	}
	if got := clientID(t, n); got != id {
		t.Fatalf("the connection was replaced (client %d, then %d), want it kept", id, got)
	}
}

// echoVote is a fan-out's vote from an ECHO's reply.
func echoVote(reply any, err error) quorum.Vote {
	s, err := redis.String(reply, err)
	return quorum.Vote{Yes: err == nil, Value: s, Err: err}
}

// A fan-out of one asynchronous call returns at once when its context is
// cancelled while it waits (a node timeout of a minute does not hold it),
// and the reply, read later by the connection's reader, completes the
// call; the connection stays in step.
func TestFanOutOfOneReadsAndStops(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{StallTimeout: time.Minute})
	opts := quorum.Options{Need: 1, Timeout: time.Minute}
	res, err := quorum.Async(t.Context(), 1, opts, func(ctx context.Context, i int, done quorum.Tally) {
		n.DoAsync(ctx, "ECHO", []any{"a"}, pool.CompletionFunc(func(reply any, err error) {
			done.Vote(i, echoVote(reply, err))
		}))
	})
	if err != nil || !res.OK() || res.Votes[0].Value != "a" {
		t.Fatalf("fan-out of one: %+v, %v; want the vote of reply a", res, err)
	}

	id := clientID(t, n)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Resume() })
	late := make(chan quorum.Vote, 1)
	ctx, cancel := context.WithCancel(t.Context())
	began := time.Now()
	res, err = quorum.Async(ctx, 1, opts, func(ctx context.Context, i int, done quorum.Tally) {
		n.DoAsync(ctx, "ECHO", []any{"b"}, pool.CompletionFunc(func(reply any, err error) {
			v := echoVote(reply, err)
			done.Vote(i, v)
			late <- v
		}))
		cancel() // while Async has yet to read the reply
	})
	if !errors.Is(err, context.Canceled) || res.Answered[0] {
		t.Fatalf("cancelled fan-out on a frozen master: %+v, %v; want no vote and Canceled", res, err)
	}
	if d := time.Since(began); d > opts.Timeout/2 {
		t.Fatalf("the cancelled fan-out returned after %v, held by the node timeout", d)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	if v := <-late; v.Value != "b" {
		t.Fatalf("the call given up completed with %+v, want its reply b", v)
	}
	if got, err := redis.String(n.Do(t.Context(), "ECHO", "c")); err != nil || got != "c" {
		t.Fatalf("the next call got %q, %v; want its own reply", got, err)
	}
	if got := clientID(t, n); got != id {
		t.Fatalf("the connection was replaced (client %d, then %d), want it kept", id, got)
	}
}

// A connection idle for longer than the read timeout is kept: the idle
// check before the next call does not take the last read's deadline,
// long past, for a broken connection.
func TestIdleConnectionOutlivesReadTimeout(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		cfg.StallTimeout, cfg.ReadTimeout = 20*time.Millisecond, 20*time.Millisecond
		_, n := start(t, redisproc.Options{}, cfg)
		id := clientID(t, n)
		time.Sleep(100 * time.Millisecond) // idle past the deadline the last read set
		if got := clientID(t, n); got != id {
			t.Fatalf("after an idle spell the call went out on client %d, want the idle connection, client %d", got, id)
		}
	})
}
