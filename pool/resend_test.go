package pool_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/faultproxy"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
)

// proxied starts a master, a fault proxy in front of it, a Node through the
// proxy with cfg's settings, and a Node straight to the master that reads
// what really happened there.
func proxied(t *testing.T, opts redisproc.Options, cfg pool.Config) (p *faultproxy.Proxy, n, direct *pool.Node) {
	t.Helper()
	srv := redistest.Start(t, 1, opts)[0]
	p, err := faultproxy.Start(srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	cfg.Addr, cfg.Password = p.Addr(), opts.Password
	n = pool.New(cfg)
	t.Cleanup(func() { n.Close() })
	cfg.Addr = srv.Addr()
	direct = pool.New(cfg)
	t.Cleanup(func() { direct.Close() })
	return p, n, direct
}

// hincrby is a reentrant-style counter: running it twice is the defect.
const hincrby = "return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)"

// The master runs a command and the connection dies before its reply: the
// call fails, and the command ran exactly once (it is never sent again).
func TestNoResendAfterLostReply(t *testing.T) {
	hash := redis.NewScript(1, hincrby).Hash()
	calls := []struct {
		name  string
		call  func(t *testing.T, n *pool.Node) (any, error)
		count func(t *testing.T, direct *pool.Node) (int, error)
	}{
		{"INCR",
			func(t *testing.T, n *pool.Node) (any, error) { return n.Do(t.Context(), "INCR", "counter") },
			func(t *testing.T, d *pool.Node) (int, error) { return redis.Int(d.Do(t.Context(), "GET", "counter")) }},
		{"EVALSHA HINCRBY",
			func(t *testing.T, n *pool.Node) (any, error) {
				return n.Eval(t.Context(), hash, hincrby, []string{"holds"}, "owner")
			},
			func(t *testing.T, d *pool.Node) (int, error) {
				return redis.Int(d.Do(t.Context(), "HGET", "holds", "owner"))
			}},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			modes(t, func(t *testing.T, cfg pool.Config) {
				p, n, direct := proxied(t, redisproc.Options{}, cfg)
				// Connect, and load the script, so that the fault hits the
				// command itself.
				if _, err := n.Eval(t.Context(), hash, hincrby, []string{"warm"}, "up"); err != nil {
					t.Fatal(err)
				}
				p.ResetAfterReply(0)
				if reply, err := c.call(t, n); err == nil {
					t.Fatalf("call whose reply was lost = %v, nil error; want an error", reply)
				}
				if p.Armed() {
					t.Fatal("the fault did not fire")
				}
				if got, err := c.count(t, direct); err != nil || got != 1 {
					t.Fatalf("the command ran %d times (%v), want exactly once", got, err)
				}
				// The node recovers on a new connection.
				if _, err := c.call(t, n); err != nil {
					t.Fatalf("call after the fault: %v", err)
				}
				if got, err := c.count(t, direct); err != nil || got != 2 {
					t.Fatalf("after one more call the count is %d (%v), want 2", got, err)
				}
			})
		})
	}
}

// A reset in the middle of a pipeline with many callers in flight: each
// caller gets its own reply or an error, never another's, and no command
// runs twice.
func TestResetMidPipeline(t *testing.T) {
	p, n, direct := proxied(t, redisproc.Options{}, pool.Config{})
	if _, err := n.Do(t.Context(), "PING"); err != nil {
		t.Fatal(err)
	}
	// The delay lets the callers' commands pile up into one pipeline
	// before the first reply comes back.
	p.SetLatency(5 * time.Millisecond)
	const callers = 16
	failed := 0
	for round := range 5 {
		// Replies are ":1000\r\n" to ":1015\r\n": let three and a half pass.
		p.ResetAfterReply(3*len(":1000\r\n") + 3)
		replies := make([]any, callers)
		errs := make([]error, callers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range callers {
			wg.Go(func() {
				<-start
				replies[i], errs[i] = n.Do(t.Context(), "INCRBY", fmt.Sprintf("r%d:%d", round, i), 1000+i)
			})
		}
		close(start)
		wg.Wait()
		if p.Armed() {
			t.Fatalf("round %d: the fault did not fire", round)
		}
		for i := range callers {
			want := int64(1000 + i)
			got, err := redis.Int64(direct.Do(t.Context(), "GET", fmt.Sprintf("r%d:%d", round, i)))
			if errors.Is(err, redis.ErrNil) {
				got, err = 0, nil
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case errs[i] == nil && replies[i] != want:
				t.Errorf("round %d caller %d: reply %v, want its own %d", round, i, replies[i], want)
			case errs[i] == nil && got != want:
				t.Errorf("round %d caller %d: succeeded, master holds %d, want %d", round, i, got, want)
			case got != 0 && got != want:
				t.Errorf("round %d caller %d: master holds %d, want 0 or %d (ran once at most)", round, i, got, want)
			}
			if errs[i] != nil {
				failed++
			}
		}
	}
	if failed == 0 {
		t.Fatal("no call failed: the resets hit nothing in flight")
	}
}
