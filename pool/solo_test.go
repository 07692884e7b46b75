package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/quorum"
)

// clientID is the master's id of the connection n's calls go out on.
func clientID(t *testing.T, n *pool.Node) int64 {
	t.Helper()
	id, err := redis.Int64(n.Do(t.Context(), "CLIENT", "ID"))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A caller alone on an idle connection reads its own reply; one that gives
// up before the reply arrives hands the read to the connection's reader,
// which reads that reply first: the caller after it, written behind it,
// gets its own reply, on the same connection.
func TestSoloReadGivenUpKeepsRepliesInStep(t *testing.T) {
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
