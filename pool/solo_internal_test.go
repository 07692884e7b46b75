package pool

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
)

// A command written behind a solo read, and taken by the connection's
// reader before that read was given up, still gets its own reply: the
// reader reads the reply given up first.
func TestGivenUpReplyReadBeforeThoseBehindIt(t *testing.T) {
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	n := New(Config{Addr: srv.Addr(), StallTimeout: time.Minute})
	t.Cleanup(func() { n.Close() })
	t.Cleanup(func() { srv.Resume() })
	if _, err := n.Do(t.Context(), "PING"); err != nil {
		t.Fatal(err)
	}
	p := n.mux.cur.Load()
	for i := range 20 { // the reader takes the one behind first only sometimes
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		first, behind := fmt.Sprint("first", i), fmt.Sprint("behind", i)
		ctx, cancel := context.WithCancel(t.Context())
		late := make(chan error, 1)
		go func() {
			_, err := n.Do(ctx, "ECHO", first) // read solo by its caller, then given up
			late <- err
		}()
		deadline := time.Now().Add(10 * time.Second)
		for inFlight(p) == 0 { // written
			if time.Now().After(deadline) {
				t.Fatal("the first ECHO was never written")
			}
			time.Sleep(time.Millisecond)
		}
		next := make(chan string, 1)
		n.DoAsync(t.Context(), "ECHO", []any{behind}, CompletionFunc(func(reply any, err error) {
			s, _ := redis.String(reply, err)
			next <- s
		}))
		cancel()
		if err := <-late; err == nil {
			t.Fatal("the call given up returned no error")
		}
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		if s := <-next; s != behind {
			t.Fatalf("the call behind the one given up got %q, want its reply %s", s, behind)
		}
		if got, err := redis.String(n.Do(t.Context(), "ECHO", "check")); err != nil || got != "check" {
			t.Fatalf("the next call got %q, %v; want its own reply", got, err)
		}
	}
}

// inFlight is the number of commands sent on p whose reply was not read.
func inFlight(p *pipe) int {
	p.q.mu.Lock()
	defer p.q.mu.Unlock()
	return p.q.sent.len()
}
