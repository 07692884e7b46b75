package pool_test

import (
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/pool"
)

// result collects the replies of calls completed by callback, in the
// order of the calls.
type result struct {
	mu      sync.Mutex
	replies []any
	errs    []error
	wg      sync.WaitGroup
}

func (r *result) done() pool.Completion {
	r.mu.Lock()
	i := len(r.replies)
	r.replies, r.errs = append(r.replies, nil), append(r.errs, nil)
	r.mu.Unlock()
	r.wg.Add(1)
	once := false
	return pool.CompletionFunc(func(reply any, err error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if once {
			panic("done ran twice")
		}
		once = true
		r.replies[i], r.errs[i] = reply, err
		r.wg.Done()
	})
}

// DoAsync and EvalPreparedAsync complete by callback with what Do and
// EvalPrepared return: replies, error replies, a script the master did
// not know.
func TestAsyncReplies(t *testing.T) {
	_, n := start(t, redisproc.Options{}, pool.Config{})
	var r result
	n.DoAsync(t.Context(), "SET", []any{"k", "v"}, r.done())
	r.wg.Wait()
	n.DoAsync(t.Context(), "GET", []any{"k"}, r.done())
	n.DoAsync(t.Context(), "INCR", []any{"k"}, r.done()) // not an integer
	src := "return tonumber(ARGV[1]) + 1"
	hash := sha1hex(src)
	n.EvalPreparedAsync(t.Context(), src, []any{hash, 0, 41}, r.done()) // unknown to the master
	n.DoAsync(t.Context(), "MULTI", nil, r.done())                      // refused, nothing sent
	r.wg.Wait()
	if r.replies[0] != "OK" || string(r.replies[1].([]byte)) != "v" {
		t.Errorf("replies %v", r.replies)
	}
	var rerr redis.Error
	if !errors.As(r.errs[2], &rerr) || !strings.Contains(rerr.Error(), "not an integer") {
		t.Errorf("INCR: %v, want the error reply", r.errs[2])
	}
	if r.replies[3] != int64(42) || r.errs[3] != nil {
		t.Errorf("EvalPreparedAsync: %v, %v; want 42 from a script the master did not know", r.replies[3], r.errs[3])
	}
	if !errors.Is(r.errs[4], pool.ErrConnState) {
		t.Errorf("MULTI: %v, want ErrConnState", r.errs[4])
	}
}

// Calls to a frozen master cost no goroutine each: they stay pending on
// the connection and all complete with an error when the stall timeout
// closes it; Close completes those pending then.
func TestAsyncFrozenMaster(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{StallTimeout: 300 * time.Millisecond})
	if _, err := n.Do(t.Context(), "PING"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Resume() })
	before := runtime.NumGoroutine()
	var r result
	const calls = 500
	start := time.Now()
	for i := range calls {
		n.DoAsync(t.Context(), "SET", []any{"k", i}, r.done())
	}
	if g := runtime.NumGoroutine() - before; g > 5 {
		t.Errorf("%d calls pending on a frozen master added %d goroutines", calls, g)
	}
	r.wg.Wait()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the pending calls completed after %v, want about the 300ms stall timeout", d)
	}
	for i, err := range r.errs {
		if err == nil || !strings.Contains(err.Error(), srv.Addr()) {
			t.Fatalf("call %d: %v, want an error naming the master", i, err)
		}
	}

	// Close completes the calls pending on a fresh connection.
	var r2 result
	for i := range 10 {
		n.DoAsync(t.Context(), "SET", []any{"k", i}, r2.done())
	}
	time.Sleep(50 * time.Millisecond)
	n.Close()
	r2.wg.Wait()
	for i, err := range r2.errs {
		if err == nil {
			t.Fatalf("call %d succeeded on a frozen master", i)
		}
	}
	var r3 result
	n.DoAsync(t.Context(), "PING", nil, r3.done())
	r3.wg.Wait()
	if r3.errs[0] == nil {
		t.Fatal("a call on a closed Node succeeded")
	}
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Callers write small batches themselves (flat combining), but never block
// on the connection: with a frozen master whose socket buffers fill up
// (large values), the calls still return at once, the writer goroutine
// takes over the writing, and every call completes when the stall timeout
// closes the connection.
func TestAsyncNeverBlocksOnAFrozenMaster(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{StallTimeout: 3 * time.Second})
	if _, err := n.Do(t.Context(), "PING"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Resume() })
	big := strings.Repeat("x", 1<<20)
	var r result
	start := time.Now()
	for i := range 32 { // 32MB: more than the sockets' buffers hold
		n.DoAsync(t.Context(), "SET", []any{fmt.Sprint("k", i), big}, r.done())
		n.DoAsync(t.Context(), "PING", nil, r.done())
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("the calls to a frozen master took %v to return, want at once (the stall timeout is 3s)", d)
	}
	r.wg.Wait()
	for i, err := range r.errs {
		if err == nil {
			t.Fatalf("call %d succeeded on a frozen master", i)
		}
	}
}
