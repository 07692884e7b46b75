package pool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/pool"
)

// A script call never runs after a command written behind it on the same
// connection, also when the master did not know the script (it was just
// restarted) but knows the next one. The two are written while the master
// is frozen, so that it reads both before it answers either: a call sent
// as EVALSHA would be answered NOSCRIPT and go again as EVAL behind the
// delete, which then found nothing, and the key set by the first script
// would be left behind.
func TestUnknownScriptKeepsItsPlace(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{})
	ctx := t.Context()
	set := "return redis.call('SET', KEYS[1], ARGV[1])"
	del := "return redis.call('DEL', KEYS[1])"
	if _, err := n.Do(ctx, "SCRIPT", "LOAD", del); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	var r result
	n.EvalPreparedAsync(ctx, set, []any{sha1hex(set), 1, "k", "held"}, r.done())
	n.EvalPreparedAsync(ctx, del, []any{sha1hex(del), 1, "k"}, r.done())
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait()
	if r.replies[0] != "OK" || r.replies[1] != int64(1) {
		t.Errorf("set = %v, %v; delete = %v, %v; want OK, then 1 key deleted", r.replies[0], r.errs[0], r.replies[1], r.errs[1])
	}
	if v, err := n.Do(ctx, "GET", "k"); v != nil || err != nil {
		t.Errorf("GET k = %q, %v after the delete: the set ran after it", v, err)
	}
}

// A call whose caller gave up before the master answered NOSCRIPT does
// not go again as EVAL: it would run behind what was written after it.
// The connection has sent the script before, so it goes as EVALSHA; the
// master has since forgotten it (SCRIPT FLUSH).
func TestNoScriptAfterGivingUpRunsNothing(t *testing.T) {
	srv, n := start(t, redisproc.Options{}, pool.Config{})
	ctx := t.Context()
	set := "return redis.call('SET', KEYS[1], ARGV[1])"
	call := func(ctx context.Context, value string) *result {
		var r result
		n.EvalPreparedAsync(ctx, set, []any{sha1hex(set), 1, "k", value}, r.done())
		return &r
	}
	call(ctx, "first").wg.Wait()
	if _, err := n.Do(ctx, "SCRIPT", "FLUSH"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	gctx, giveUp := context.WithCancel(ctx)
	r := call(gctx, "late")
	giveUp()
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	r.wg.Wait()
	if !isNoScript(r.errs[0]) {
		t.Errorf("the call given up on = %v, %v; want its NOSCRIPT error", r.replies[0], r.errs[0])
	}
	if v, err := redis.String(n.Do(ctx, "GET", "k")); v != "first" || err != nil {
		t.Errorf("GET k = %q, %v; want %q: the script ran again after its caller gave up", v, err, "first")
	}
}

func isNoScript(err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr) && strings.HasPrefix(string(rerr), "NOSCRIPT")
}
