package nodeutil_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// errNoScript and errReply stand for a client's error replies; fakeMaster
// records what its Send sent.
var errNoScript = errors.New("NOSCRIPT No matching script")

type fakeMaster struct {
	mu      sync.Mutex
	sent    []string
	scripts map[string]bool // hashes the master knows
	slow    chan struct{}   // when set, a command waits for it
}

type replyErr struct{ msg string }

func (e replyErr) Error() string { return e.msg }

func (m *fakeMaster) send(ctx context.Context, _ struct{}, cmd, keys, args []string) (any, error) {
	if ctx.Err() != nil {
		return nil, errors.New("Send's context ended with its caller's")
	}
	if m.slow != nil {
		<-m.slow
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	line := strings.Join(append(append(append([]string{}, cmd...), keys...), args...), " ")
	m.sent = append(m.sent, line)
	switch cmd[0] {
	case "EVALSHA":
		if !m.scripts[cmd[1]] {
			return nil, replyErr{errNoScript.Error()}
		}
		return "ran by hash", nil
	case "EVAL":
		return "ran by source", nil
	}
	return line, nil
}

func (m *fakeMaster) commands() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.sent...)
}

func newExec(m *fakeMaster) *nodeutil.Exec[struct{}] {
	return &nodeutil.Exec[struct{}]{
		Name:   "fake",
		Addr:   "m:1",
		Client: func(context.Context) (struct{}, error) { return struct{}{}, nil },
		Send:   m.send,
		Reply: func(err error) (error, bool) {
			var r replyErr
			return r, errors.As(err, &r)
		},
		IsNoScript: func(err error) bool { return strings.HasPrefix(err.Error(), "NOSCRIPT") },
	}
}

func TestExec(t *testing.T) {
	m := &fakeMaster{scripts: map[string]bool{"known": true}}
	e := newExec(m)
	ctx := t.Context()
	if got, err := e.Do(ctx, "SET", "k", 7, true); err != nil || got != "SET k 7 1" {
		t.Errorf("Do = %v, %v; want the command as sent", got, err)
	}
	if got, err := e.Eval(ctx, "known", "src", []string{"k"}, 1); err != nil || got != "ran by hash" {
		t.Errorf("Eval of a known script = %v, %v", got, err)
	}
	if got, err := e.EvalPrepared(ctx, "src", []any{"unknown", 1, "k", 2}); err != nil || got != "ran by source" {
		t.Errorf("EvalPrepared of an unknown script = %v, %v; want the EVAL fallback", got, err)
	}
	want := []string{"SET k 7 1", "EVALSHA known 1 k 1", "EVALSHA unknown 1 k 2", "EVAL src 1 k 2"}
	if got := m.commands(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sent %q, want %q", got, want)
	}
	if _, err := e.EvalPrepared(ctx, "src", []any{"h", 5}); err == nil || !strings.HasPrefix(err.Error(), "fake: m:1: ") {
		t.Errorf("EvalPrepared with bad arguments: %v, want an error naming the Node", err)
	}

	// An error reply comes back as Reply makes it; other errors name the Node.
	e.Send = func(context.Context, struct{}, []string, []string, []string) (any, error) {
		return nil, replyErr{"WRONGTYPE"}
	}
	var r replyErr
	if _, err := e.Do(ctx, "GET", "k"); !errors.As(err, &r) || err.Error() != "WRONGTYPE" {
		t.Errorf("error reply: %v, want it unchanged", err)
	}
	e.Send = func(context.Context, struct{}, []string, []string, []string) (any, error) {
		return nil, errors.New("connection reset")
	}
	if _, err := e.Do(ctx, "GET", "k"); err == nil || err.Error() != "fake: m:1: connection reset" {
		t.Errorf("transport error: %v, want it prefixed with the Node's name and address", err)
	}
	e.Client = func(context.Context) (struct{}, error) { return struct{}{}, errors.New("dial refused") }
	if _, err := e.Do(ctx, "GET", "k"); err == nil || !strings.Contains(err.Error(), "dial refused") {
		t.Errorf("no client: %v, want the client's error", err)
	}
}

// A call whose context has ended sends nothing; one whose context ends
// while its command waits returns at once, and the command goes on.
func TestExecContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMaster{scripts: map[string]bool{}}
		e := newExec(m)
		ended, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := e.Do(ended, "SET", "k", "v"); !errors.Is(err, context.Canceled) {
			t.Errorf("Do with an ended context: %v, want Canceled", err)
		}
		if len(m.commands()) != 0 {
			t.Fatal("a call with an ended context sent its command")
		}

		m.slow = make(chan struct{})
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := e.Do(ctx, "SET", "k", "v"); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Do past its deadline: %v, want DeadlineExceeded", err)
		}
		close(m.slow)
		if got, err := e.Do(t.Context(), "GET", "k"); err != nil || got != "GET k" {
			t.Fatalf("next Do = %v, %v", got, err)
		}
		synctest.Wait()
		if got := m.commands(); len(got) != 2 || !slices.Contains(got, "SET k v") {
			t.Errorf("sent %q, want the SET whose caller gave up, and the GET", got)
		}
	})
}

// The EVAL that follows a NOSCRIPT goes out even when the caller's
// context ended meanwhile: the script has not run, and its caller's
// release, which follows it, must find it.
func TestExecFallbackAfterCallerGaveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMaster{scripts: map[string]bool{}}
		e := newExec(m)
		ctx, cancel := context.WithCancel(t.Context())
		send := e.Send
		e.Send = func(sctx context.Context, c struct{}, cmd, keys, args []string) (any, error) {
			reply, err := send(sctx, c, cmd, keys, args)
			if cmd[0] == "EVALSHA" {
				cancel() // the caller gives up while the NOSCRIPT comes back
			}
			return reply, err
		}
		// The caller gets Canceled, or the EVAL's reply if it came as fast.
		if got, err := e.Eval(ctx, "h", "src", []string{"k"}); !errors.Is(err, context.Canceled) && got != "ran by source" {
			t.Errorf("Eval whose caller gave up = %v, %v; want Canceled", got, err)
		}
		synctest.Wait()
		if got := m.commands(); len(got) != 2 || got[1] != "EVAL src 1 k" {
			t.Errorf("sent %q, want EVALSHA then the EVAL fallback", got)
		}
	})
}

// A NOSCRIPT that comes back past the linger sends no EVAL: the call is
// over.
func TestExecNoFallbackPastLinger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := &fakeMaster{scripts: map[string]bool{}, slow: make(chan struct{})}
		e := newExec(m)
		e.Linger = 100 * time.Millisecond
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := e.Eval(ctx, "h", "src", []string{"k"}); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Eval past its deadline: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
		close(m.slow)
		synctest.Wait()
		if got := m.commands(); len(got) != 1 || got[0] != "EVALSHA h 1 k" {
			t.Errorf("sent %q, want the EVALSHA alone", got)
		}
	})
}
