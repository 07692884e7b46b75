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

// testAsync, for a Node that is a redlock.AsyncNode: DoAsync and
// EvalPreparedAsync complete once, with what Do and EvalPrepared return
// (the EVAL fallback included), also on a frozen master, whose pending
// calls must complete eventually (the Locker sends a release only after
// its acquire completed).
func (s *suite) testAsync(t *testing.T) {
	n := s.node(t, 0)
	a, ok := n.(redlock.AsyncNode)
	if !ok {
		t.Skip("the Node is not a redlock.AsyncNode")
	}
	k := key(t)
	done, ch := asyncCall(t)
	a.DoAsync(ctx(t), "SET", []any{k, "v", "NX", "PX", 60000}, done)
	if r := awaitResult(t, ch, "DoAsync SET"); r.reply != "OK" || r.err != nil {
		t.Errorf("DoAsync SET NX = %#v, %v; want \"OK\"", r.reply, r.err)
	}
	done, ch = asyncCall(t)
	a.DoAsync(ctx(t), "SET", []any{k, "v", "NX", "PX", 60000}, done)
	if r := awaitResult(t, ch, "DoAsync SET"); r.reply != nil || r.err != nil {
		t.Errorf("DoAsync SET NX of a held key = %#v, %v; want nil", r.reply, r.err)
	}
	done, ch = asyncCall(t)
	a.DoAsync(ctx(t), "INCR", []any{k}, done)
	if r := awaitResult(t, ch, "DoAsync INCR"); r.err == nil || errors.Is(r.err, context.DeadlineExceeded) {
		t.Errorf("DoAsync INCR of a string = %#v, %v; want an error reply", r.reply, r.err)
	}
	src := "return redis.call('INCR', KEYS[1])"
	sum := sha1.Sum([]byte(src + " -- " + k)) // unknown to the master
	src += " -- " + k
	ik := key(t)
	done, ch = asyncCall(t)
	a.EvalPreparedAsync(ctx(t), src, []any{hex.EncodeToString(sum[:]), 1, ik}, done)
	if r := awaitResult(t, ch, "EvalPreparedAsync"); r.reply != int64(1) || r.err != nil {
		t.Errorf("EvalPreparedAsync of an unknown script = %#v, %v; want 1 (run once, by the EVAL fallback)", r.reply, r.err)
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
		done, chs[i] = asyncCall(t)
		a.DoAsync(cctx, "SET", []any{key(t), "v", "NX", "PX", 60000}, done)
	}
	for _, ch := range chs {
		awaitResult(t, ch, "a call pending on a frozen master")
	}
}
