package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/pool"
)

// A script call whose caller gave up before the master answered NOSCRIPT
// still runs, as EVAL: a release that comes back NOSCRIPT after its node
// timeout (the master's script cache was flushed, or it restarted) must
// land, or the lock stays on that master for its TTL. The master is frozen
// while the call goes out and the caller gives up, so the NOSCRIPT comes
// after the caller's end, in both modes.
func TestNoScriptAfterGivingUpStillRuns(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv, n := start(t, redisproc.Options{}, cfg)
		ctx := t.Context()
		set := "return redis.call('SET', KEYS[1], ARGV[1])"
		if _, err := n.EvalPrepared(ctx, set, []any{sha1hex(set), 1, "k", "first"}); err != nil {
			t.Fatal(err)
		}
		if _, err := n.Do(ctx, "SCRIPT", "FLUSH"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		gctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		_, err := n.EvalPrepared(gctx, set, []any{sha1hex(set), 1, "k", "late"})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("the call on a frozen master: %v, want its deadline", err)
		}
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			v, err := redis.String(n.Do(ctx, "GET", "k"))
			if err == nil && v == "late" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET k = %q, %v; want %q: the EVAL after NOSCRIPT never ran once its caller gave up", v, err, "late")
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}
