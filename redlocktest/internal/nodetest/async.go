package nodetest

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// asyncResult is the outcome of one call completed by callback.
type asyncResult struct {
	reply any
	err   error
}

// asyncCall makes a done function that must run exactly once, and a
// channel that gets its outcome.
func asyncCall(t *testing.T) (redlock.Completion, <-chan asyncResult) {
	ch := make(chan asyncResult, 1)
	var once sync.Once
	return redlock.CompletionFunc(func(reply any, err error) {
		first := false
		once.Do(func() { first = true })
		if !first {
			t.Error("done ran more than once")
			return
		}
		ch <- asyncResult{reply, err}
	}), ch
}

func awaitResult(t *testing.T, ch <-chan asyncResult, what string) asyncResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(patience):
		t.Fatalf("%s: done did not run within %v", what, patience)
		return asyncResult{}
	}
}

// testAsync, for a Node with Abilities.EvalAsync: it
// completes once, with what EvalPrepared returns (replies, error replies,
// the EVAL fallback included), also on a frozen master, whose pending
// calls must complete eventually.
func (s *suite) testAsync(t *testing.T) {
	n := s.node(t, 0)
	evalAsync := redlock.AbilitiesOf(n).EvalAsync
	if evalAsync == nil {
		t.Skip("the Node has no Abilities.EvalAsync")
	}
	call := func(ctx context.Context, src string, keys ...string) <-chan asyncResult {
		done, ch := asyncCall(t)
		sum := sha1.Sum([]byte(src))
		args := []any{hex.EncodeToString(sum[:]), len(keys)}
		for _, k := range keys {
			args = append(args, k)
		}
		evalAsync(ctx, src, args, done)
		return ch
	}
	k := key(t)
	setNX := script(t, "return redis.call('SET', KEYS[1], 'v', 'NX', 'PX', 60000)")
	if r := awaitResult(t, call(ctx(t), setNX, k), "SET NX"); r.reply != "OK" || r.err != nil {
		t.Errorf("a script's SET NX = %#v, %v; want \"OK\" (run once, by the EVAL fallback)", r.reply, r.err)
	}
	if r := awaitResult(t, call(ctx(t), setNX, k), "SET NX"); r.reply != nil || r.err != nil {
		t.Errorf("a script's SET NX of a held key = %#v, %v; want nil", r.reply, r.err)
	}
	incr := script(t, "return redis.call('INCR', KEYS[1])")
	if r := awaitResult(t, call(ctx(t), incr, k), "INCR"); r.err == nil || errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("a script's INCR of a string = %#v, %v; want an error reply", r.reply, r.err)
	}
	if r := awaitResult(t, call(ctx(t), incr, key(t)), "INCR"); r.reply != int64(1) || r.err != nil {
		t.Errorf("a script's INCR = %#v, %v; want 1", r.reply, r.err)
	}

	// A frozen master: the calls stay pending, and complete eventually.
	thaw, err := s.masters[0].Freeze()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("%s cannot freeze a master", s.b.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer thaw()
	chs := make([]<-chan asyncResult, 20)
	for i := range chs {
		cctx, cancel := context.WithTimeout(context.Background(), frozenTimeout)
		defer cancel()
		chs[i] = call(cctx, incr, key(t))
	}
	for _, ch := range chs {
		awaitResult(t, ch, "a call pending on a frozen master")
	}
}
