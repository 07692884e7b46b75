package nodetest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/redlock"
)

// evaler is one way to run a script on a Node: Node.Eval, or
// PreparedEvaler.EvalPrepared when the Node has that ability.
type evaler struct {
	name string
	eval func(ctx context.Context, n redlock.Node, src string, keys []string, args ...any) (any, error)
}

func hashOf(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

// evalers are the script paths the Node has; a Node without
// Abilities.EvalPrepared has only Eval, and the EvalPrepared checks are
// skipped.
func (s *suite) evalers(t *testing.T) []evaler {
	es := []evaler{{name: "Eval", eval: func(ctx context.Context, n redlock.Node, src string, keys []string, args ...any) (any, error) {
		return n.Eval(ctx, hashOf(src), src, keys, args...)
	}}}
	if redlock.AbilitiesOf(s.node(t, 0)).EvalPrepared == nil {
		t.Log("the Node has no Abilities.EvalPrepared: it is not checked")
		return es
	}
	return append(es, evaler{name: "EvalPrepared", eval: func(ctx context.Context, n redlock.Node, src string, keys []string, args ...any) (any, error) {
		p := redlock.AbilitiesOf(n).EvalPrepared
		if p == nil {
			return nil, fmt.Errorf("redlocktest: newNode made a Node without Abilities.EvalPrepared, unlike the first")
		}
		cmdArgs := append([]any{hashOf(src), len(keys)}, anys(keys)...)
		return p(ctx, src, append(cmdArgs, args...))
	}})
}

func anys(keys []string) []any {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = k
	}
	return out
}

// script makes a script of its own for t: a comment with a random word
// gives it a SHA1 no other check uses, so a master cannot know it yet.
func script(t *testing.T, body string) string {
	return "-- " + key(t) + "\n" + body
}

// testEvalReplies: a script's integer, nil, status and bulk replies, as
// for Do; keys and arguments arrive in order.
func (s *suite) testEvalReplies(t *testing.T, e evaler) {
	n, k := s.node(t, 0), key(t)
	checks := []struct {
		body string
		want func(any) bool
		desc string
	}{
		{"return 42", func(r any) bool { return r == int64(42) }, "int64(42)"},
		{"return false", func(r any) bool { return r == nil }, "nil (untyped)"},
		{"return redis.call('GET', KEYS[1])", func(r any) bool { return r == nil }, "nil (untyped) for a missing key"},
		{"return redis.status_reply('OK')", func(r any) bool { return r == "OK" }, `the string "OK"`},
		{"return KEYS[1] .. '|' .. ARGV[1] .. '|' .. ARGV[2]", func(r any) bool { s, ok := text(r); return ok && s == k+"|a|7" }, "KEYS[1]|a|7 as []byte or string"},
		{"return redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) and 1 or 0", func(r any) bool { return r == int64(1) }, "int64(1)"},
	}
	for _, ck := range checks {
		r, err := e.eval(ctx(t), n, script(t, ck.body), []string{k}, "a", 7)
		if err != nil {
			t.Fatalf("script %q: %v", ck.body, err)
		}
		if !ck.want(r) {
			t.Errorf("script %q = %#v (%T), want %s", ck.body, r, r, ck.desc)
		}
	}
}

// testEvalFallback: a script the master does not know runs (EVAL
// fallback), once; after SCRIPT FLUSH it still runs, again exactly once.
func (s *suite) testEvalFallback(t *testing.T, e evaler) {
	n, c, k := s.node(t, 0), s.control(t, 0), key(t)
	src := script(t, "return redis.call('INCR', KEYS[1])")
	for want := int64(1); want <= 4; want++ {
		if want == 3 {
			c.do("SCRIPT", "FLUSH")
		}
		r, err := e.eval(ctx(t), n, src, []string{k})
		if err != nil {
			t.Fatalf("call %d: %v", want, err)
		}
		if r != want {
			t.Fatalf("call %d = %#v, want int64(%d)", want, r, want)
		}
		if got := c.int("GET", k); got != want {
			t.Fatalf("after call %d the counter is %d: the script ran %d times", want, got, got-want+1)
		}
		if known := c.do("SCRIPT", "EXISTS", hashOf(src)); fmt.Sprint(known) != "[1]" {
			t.Errorf("after call %d SCRIPT EXISTS = %v: the script is not cached on the master", want, known)
		}
	}
}

// testUsesEvalsha: a cached script is called by its SHA1 (EVALSHA), not
// sent again with EVAL. It reads INFO commandstats, and is skipped where
// the master has none.
func (s *suite) testUsesEvalsha(t *testing.T, e evaler) {
	n, c, k := s.node(t, 0), s.control(t, 0), key(t)
	src := script(t, "return 1")
	if _, err := e.eval(ctx(t), n, src, []string{k}); err != nil {
		t.Fatal(err)
	}
	before, ok := commandCalls(c)
	if !ok {
		t.Skipf("%s has no INFO commandstats", s.b.Name)
	}
	const calls = 5
	for range calls {
		if _, err := e.eval(ctx(t), n, src, []string{k}); err != nil {
			t.Fatal(err)
		}
	}
	after, _ := commandCalls(c)
	if d := after["evalsha"] - before["evalsha"]; d < calls {
		t.Errorf("%d calls of a cached script sent EVALSHA %d times", calls, d)
	}
	if d := after["eval"] - before["eval"]; d != 0 {
		t.Errorf("%d calls of a cached script sent EVAL %d times, want 0", calls, d)
	}
}

// commandCalls parses INFO commandstats into calls per command; false
// when the master has no such section.
func commandCalls(c *control) (map[string]int64, bool) {
	info, err := redis.String(c.c.Do("INFO", "commandstats"))
	if err != nil {
		return nil, false
	}
	calls := map[string]int64{}
	for line := range strings.Lines(info) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		for f := range strings.SplitSeq(rest, ",") {
			if v, ok := strings.CutPrefix(f, "calls="); ok {
				calls[strings.TrimPrefix(name, "cmdstat_")], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	return calls, len(calls) > 0
}

// testScriptErrors: redis.error_reply and a failing redis.call come back
// as errors with the server's message, for a cached and an uncached
// script alike, and the Node stays usable.
func (s *suite) testScriptErrors(t *testing.T, e evaler) {
	n, k := s.node(t, 0), key(t)
	if _, err := n.Do(ctx(t), "SET", k, "v"); err != nil {
		t.Fatal(err)
	}
	custom := script(t, "return redis.error_reply('REDLOCKTEST custom failure')")
	wrong := script(t, "return redis.call('HINCRBY', KEYS[1], 'f', 1)")
	for range 2 { // uncached, then cached
		_, err := e.eval(ctx(t), n, custom, []string{k})
		if err == nil || isCtxErr(err) || !strings.Contains(err.Error(), "REDLOCKTEST custom failure") {
			t.Errorf("redis.error_reply: err = %v, want the script's error", err)
		}
		_, err = e.eval(ctx(t), n, wrong, []string{k})
		wrongType(t, "HINCRBY on a string in a script", err)
	}
	if r, err := e.eval(ctx(t), n, script(t, "return 5"), nil); err != nil || r != int64(5) {
		t.Errorf("a script after error replies = %#v, %v; want int64(5)", r, err)
	}
}

// testEvalEndedContext: a script call with an ended context fails
// promptly, with an error that matches the context's, and runs at most
// once.
func (s *suite) testEvalEndedContext(t *testing.T, e evaler) {
	n, c, k := s.node(t, 0), s.control(t, 0), key(t)
	if _, err := n.Do(ctx(t), "PING"); err != nil { // connected: the call has nothing to wait for
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := script(t, "return redis.call('INCR', KEYS[1])")
	var err error
	returnsWithin(t, Bound, "a script call with a cancelled context", func() {
		_, err = e.eval(cctx, n, src, []string{k})
	})
	if !errorsIsCanceled(err) {
		t.Errorf("a script call with a cancelled context: err = %v, want one matching context.Canceled", err)
	}
	if got := c.int("INCR", k); got > 2 {
		t.Errorf("the script ran %d times", got-1)
	}
}

// testEvalFrozen: a script call on a master that answers nothing returns
// when its context ends.
func (s *suite) testEvalFrozen(t *testing.T, e evaler) {
	s.frozen(t, func(n redlock.Node, cctx context.Context) error {
		_, err := e.eval(cctx, n, script(t, "return 1"), []string{key(t)})
		return err
	})
}

// testEvalConcurrent: concurrent script calls on one Node each get their
// own reply.
func (s *suite) testEvalConcurrent(t *testing.T, e evaler) {
	n, base := s.node(t, 0), key(t)
	src := script(t, "return ARGV[1] .. ':' .. redis.call('INCR', KEYS[1])")
	s.concurrently(t, func(g, i int) error {
		k := fmt.Sprintf("%s:%d", base, g)
		r, err := e.eval(ctx(t), n, src, []string{k}, strconv.Itoa(g))
		if err != nil {
			return err
		}
		if got, want := fmt.Sprint(textOr(r)), fmt.Sprintf("%d:%d", g, i+1); got != want {
			return fmt.Errorf("goroutine %d call %d got %q, want %q", g, i, got, want)
		}
		return nil
	})
}

func textOr(r any) any {
	if s, ok := text(r); ok {
		return s
	}
	return r
}

// concurrently runs f(g, i) for 16 goroutines g, 20 calls i each, and
// reports the first errors.
func (s *suite) concurrently(t *testing.T, f func(g, i int) error) {
	t.Helper()
	const goroutines, calls = 16, 20
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				if err := f(g, i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(4 * patience):
		t.Fatal("concurrent calls did not finish")
	}
	for i, err := range errs {
		if i == 5 {
			t.Errorf("... and %d more", len(errs)-i)
			break
		}
		t.Error(err)
	}
}
