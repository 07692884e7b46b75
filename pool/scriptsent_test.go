package pool_test

import (
	"testing"

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
