package pool

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/internal/interleave"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
)

// An asynchronous call's request goes back to the pool when it completes,
// which may happen while its caller's flush still writes what others
// queued: the pool may then hand it to a Do caller whose command that
// flush writes next. The flush must write that command as any other's
// (it once took it for its caller's own, and held it for a read by that
// caller, who had left: the reader waited for ever behind it, and the Do
// call and every command after it on the connection got no reply).
func TestFlushTakesNoRecycledRequestForItsOwn(t *testing.T) {
	if !layers.combine {
		t.Skip("no caller writes: flat combining is off (layersOff)")
	}
	// A pool of this test's own, so that the request handed on by hand
	// below, put back twice, goes nowhere else.
	saved := requests
	requests = &sync.Pool{New: saved.New}
	t.Cleanup(func() { requests = saved })
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	n := New(Config{Addr: srv.Addr(), StallTimeout: time.Minute})
	t.Cleanup(func() { n.Close() })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := n.Do(ctx, "PING"); err != nil { // dialed
		t.Fatal(err)
	}
	// The writer goroutine wrote the PING, which waited for the dial, and
	// may not have given the writing up yet: the first call below must
	// find nobody writing, or that goroutine writes it, not its caller.
	p := n.mux.cur.Load()
	awaitQueue(ctx, t, p, func(queued int, writing bool) bool { return !writing })

	completed := make(chan error, 1)
	first := newRequest(ctx, "ECHO", []any{"first"}, "", CompletionFunc(func(_ any, err error) { completed <- err }))
	handedOn := make(chan error, 1)
	var armed atomic.Bool // for first's flush only
	interleave.SetAfterOwnWrite(func() {
		if !armed.CompareAndSwap(true, false) {
			return
		}
		var err error
		select {
		case err = <-completed: // first is back in the pool
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			handedOn <- err
			return
		}
		// The pool hands first's request to a Do caller: its command is
		// queued behind this flush's first batch, as the next batch.
		r := first
		r.ctx, r.cmd, r.args = ctx, "ECHO", []any{"handed on"}
		r.size = sizeOf(r.cmd, r.args)
		go func() {
			reply, err := n.mux.await(r)
			if err == nil && string(reply.([]byte)) != "handed on" {
				t.Errorf("the handed-on Do got %q", reply)
			}
			handedOn <- err
		}()
		awaitQueue(ctx, t, p, func(queued int, writing bool) bool { return queued > 0 })
	})
	t.Cleanup(func() { interleave.SetAfterOwnWrite(nil) })

	armed.Store(true)
	n.mux.submit(first) // as DoAsync does
	select {
	case err := <-handedOn:
		if err != nil {
			t.Fatalf("the Do call queued behind the first batch: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the first call's flush never came past its own write")
	}
	if got, err := n.Do(ctx, "ECHO", "after"); err != nil || string(got.([]byte)) != "after" {
		t.Fatalf("the next call on the connection: %q, %v", got, err)
	}
}

// awaitQueue waits until p's queue and writing flag, read under its lock,
// satisfy cond, and fails t when ctx ends first.
func awaitQueue(ctx context.Context, t *testing.T, p *pipe, cond func(queued int, writing bool) bool) {
	for {
		p.q.mu.Lock()
		ok := cond(len(p.q.unsent), p.q.writing)
		p.q.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Errorf("the connection's queue: %v", ctx.Err())
			return
		case <-time.After(time.Millisecond):
		}
	}
}

// A command written behind one whose caller gave up still gets its own
// reply: the reply given up is read first, and dropped.
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
			_, err := n.Do(ctx, "ECHO", first) // given up
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
