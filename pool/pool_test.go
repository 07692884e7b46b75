package pool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
)

// modes runs f with a pooled and with a pipelined Node configuration.
func modes(t *testing.T, f func(t *testing.T, cfg pool.Config)) {
	for _, pooled := range []bool{false, true} {
		t.Run(fmt.Sprintf("pooled=%v", pooled), func(t *testing.T) {
			f(t, pool.Config{Pooled: pooled})
		})
	}
}

// start starts a server and a Node for it, with cfg's settings.
func start(t *testing.T, opts redisproc.Options, cfg pool.Config) (*redisproc.Server, *pool.Node) {
	t.Helper()
	srv := redistest.Start(t, 1, opts)[0]
	cfg.Addr, cfg.Password = srv.Addr(), opts.Password
	n := pool.New(cfg)
	t.Cleanup(func() { n.Close() })
	return srv, n
}

func TestDoAndEval(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		_, n := start(t, redisproc.Options{}, cfg)
		ctx := t.Context()
		if _, err := n.Do(ctx, "SET", "k", "v"); err != nil {
			t.Fatal(err)
		}
		src := "return redis.call('GET', KEYS[1]) .. ARGV[1]"
		hash := redis.NewScript(1, src).Hash()
		for i := range 2 { // the first run goes as EVAL, the second as EVALSHA
			got, err := redis.String(n.Eval(ctx, hash, src, []string{"k"}, "!"))
			if err != nil || got != "v!" {
				t.Fatalf("run %d: Eval = %q, %v", i, got, err)
			}
		}
		if _, err := n.Do(ctx, "SCRIPT", "FLUSH"); err != nil {
			t.Fatal(err)
		}
		if got, err := redis.String(n.Eval(ctx, hash, src, []string{"k"}, "?")); err != nil || got != "v?" {
			t.Fatalf("after SCRIPT FLUSH: Eval = %q, %v", got, err)
		}
	})
}

func TestErrorRepliesStayMatchable(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		_, n := start(t, redisproc.Options{}, cfg)
		ctx := t.Context()
		if _, err := n.Do(ctx, "HSET", "h", "f", "v"); err != nil {
			t.Fatal(err)
		}
		_, err := n.Do(ctx, "GET", "h")
		var rerr redis.Error
		if !errors.As(err, &rerr) || !strings.HasPrefix(string(rerr), "WRONGTYPE") {
			t.Fatalf("GET on a hash: %v, want a WRONGTYPE redis.Error", err)
		}
	})
}

func TestAuth(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv, n := start(t, redisproc.Options{Password: "s3cret"}, cfg)
		if got, err := redis.String(n.Do(t.Context(), "PING")); err != nil || got != "PONG" {
			t.Fatalf("PING with password: %q, %v", got, err)
		}
		cfg.Addr = srv.Addr()
		anon := pool.New(cfg)
		defer anon.Close()
		_, err := anon.Do(t.Context(), "GET", "x")
		if err == nil || !strings.Contains(err.Error(), "NOAUTH") {
			t.Fatalf("without password: %v, want NOAUTH", err)
		}
	})
}

func TestSelectsDB(t *testing.T) {
	srv := redistest.Start(t, 1, redisproc.Options{})[0]
	db0 := pool.New(pool.Config{Addr: srv.Addr()})
	db3 := pool.New(pool.Config{Addr: srv.Addr(), DB: 3})
	defer db0.Close()
	defer db3.Close()
	if _, err := db3.Do(t.Context(), "SET", "k", "3"); err != nil {
		t.Fatal(err)
	}
	if got, err := db0.Do(t.Context(), "GET", "k"); err != nil || got != nil {
		t.Fatalf("GET in db 0 = %v, %v; want nil", got, err)
	}
}

// A frozen master accepts connections and never answers: calls must end at
// the caller's deadline, and the connection they used must not be reused
// (it would hand the next caller a stale reply).
func TestFrozenMasterHonoursDeadline(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv, n := start(t, redisproc.Options{}, cfg)
		if _, err := n.Do(t.Context(), "SET", "k", "before"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Pause(); err != nil {
			t.Fatal(err)
		}
		for _, call := range []func(ctx context.Context) error{
			func(ctx context.Context) error { _, err := n.Do(ctx, "SET", "k", "during"); return err },
			func(ctx context.Context) error { _, err := n.Eval(ctx, "0000", "return 1", nil); return err },
		} {
			ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
			done := make(chan error, 1)
			go func() { done <- call(ctx) }()
			select {
			case err := <-done:
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("call on a frozen master: %v, want context.DeadlineExceeded", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("call on a frozen master hung past its deadline")
			}
			cancel()
		}
		if err := srv.Resume(); err != nil {
			t.Fatal(err)
		}
		// The frozen SET may land once the server resumes; either way the next
		// replies must be the answers to the next commands.
		for i := range 20 {
			want := "after" + string(rune('a'+i))
			if _, err := n.Do(t.Context(), "SET", "k2", want); err != nil {
				t.Fatal(err)
			}
			if got, err := redis.String(n.Do(t.Context(), "GET", "k2")); err != nil || got != want {
				t.Fatalf("GET after resume = %q, %v; want %q", got, err, want)
			}
		}
		if s := n.Stats(); s.Active < 1 {
			t.Fatalf("Stats = %+v, want an open connection", s)
		}
	})
}

func TestNoAddr(t *testing.T) {
	n := pool.New(pool.Config{})
	defer n.Close()
	if _, err := n.Do(t.Context(), "PING"); !errors.Is(err, pool.ErrNoAddr) {
		t.Fatalf("Do without address: %v, want ErrNoAddr", err)
	}
}

func TestClosedNode(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		_, n := start(t, redisproc.Options{}, cfg)
		n.Close()
		if _, err := n.Do(t.Context(), "PING"); err == nil {
			t.Fatal("Do on a closed node succeeded")
		}
	})
}
