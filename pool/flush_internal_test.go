package pool

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/interleave"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
)

// An asynchronous call's request goes back to the pool when it completes,
// which may happen while its caller's flush still writes what others
// queued: the pool may then hand it to a Do caller whose command that
// flush writes next. The flush must not take that command for its
// caller's own and hold it for a solo read: nobody would read it, the
// reader goroutine would wait for ever behind it, and the Do call and
// every command after it on the connection would get no reply.
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
	n.mux.submit(first, false) // as DoAsync does
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
