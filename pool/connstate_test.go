package pool_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Commands that change the state of a shared connection are refused in
// both modes, in any case, before anything is sent.
func TestRefusesConnStateCommands(t *testing.T) {
	refused := [][]any{
		{"MULTI"}, {"exec"}, {"Discard"}, {"WATCH", "k"}, {"unwatch"},
		{"SELECT", 1}, {"RESET"}, {"HELLO", 3}, {"AUTH", "pw"}, {"QUIT"},
		{"SUBSCRIBE", "ch"}, {"psubscribe", "c*"}, {"SSUBSCRIBE", "ch"},
		{"UNSUBSCRIBE"}, {"PUNSUBSCRIBE"}, {"SUNSUBSCRIBE"},
		{"MONITOR"}, {"READONLY"}, {"READWRITE"},
		{"CLIENT", "REPLY", "OFF"}, {"client", "tracking", "on"}, {"CLIENT", []byte("reply"), "SKIP"},
	}
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv, n := start(t, redisproc.Options{}, cfg)
		for _, c := range refused {
			_, err := n.Do(t.Context(), c[0].(string), c[1:]...)
			if !errors.Is(err, pool.ErrConnState) || !strings.HasPrefix(err.Error(), "pool: ") {
				t.Errorf("%v: %v, want ErrConnState", c, err)
			}
		}
		if s := n.Stats(); s.Active != 0 {
			t.Fatalf("Stats = %+v after refused commands only, want no connection", s)
		}
		// Nothing reached the master.
		c, err := redis.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		stats, err := redis.String(c.Do("INFO", "commandstats"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"multi", "select", "subscribe", "client|reply", "client|tracking", "hello", "reset", "watch"} {
			if strings.Contains(stats, "cmdstat_"+name+":") {
				t.Errorf("the master ran %s:\n%s", name, stats)
			}
		}
		// Harmless relatives still pass.
		if _, err := n.Do(t.Context(), "CLIENT", "SETNAME", "x"); err != nil {
			t.Errorf("CLIENT SETNAME: %v", err)
		}
		if _, err := n.Do(t.Context(), "PUBLISH", "ch", "m"); err != nil {
			t.Errorf("PUBLISH: %v", err)
		}
	})
}

// Blocking commands would hold up every caller of the pipelined
// connection: refused there, run in Pooled mode.
func TestBlockingCommands(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		_, n := start(t, redisproc.Options{}, cfg)
		for _, c := range [][]any{
			{"BLPOP", "list", 0.01}, {"bzpopmin", "z", 0.01}, {"WAIT", 0, 1},
			{"XREAD", "block", 10, "STREAMS", "s", "$"},
		} {
			_, err := n.Do(t.Context(), c[0].(string), c[1:]...)
			if cfg.Pooled && err != nil {
				t.Errorf("%v in Pooled mode: %v", c, err)
			}
			if !cfg.Pooled && !errors.Is(err, pool.ErrBlocking) {
				t.Errorf("%v on the pipelined connection: %v, want ErrBlocking", c, err)
			}
		}
		if _, err := n.Do(t.Context(), "XREAD", "STREAMS", "s", "0"); err != nil {
			t.Errorf("XREAD without BLOCK: %v", err)
		}
	})
}

// A caller that sends MULTI through the nodes of a Locker must not turn the
// lock scripts of concurrent callers into QUEUED replies: a TryLock on a
// key another client holds is never granted.
func TestMultiDoesNotLeakIntoLocks(t *testing.T) {
	servers := redistest.Start(t, 3, redisproc.Options{})
	newLocker := func() (*redlock.Locker, []*pool.Node) {
		nodes := make([]redlock.Node, len(servers))
		pns := make([]*pool.Node, len(servers))
		for i, s := range servers {
			pns[i] = pool.New(pool.Config{Addr: s.Addr()})
			t.Cleanup(func() { pns[i].Close() })
			nodes[i] = pns[i]
		}
		l, err := redlock.New(nodes, redlock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		return l, pns
	}
	holder, _ := newLocker()
	held, err := holder.TryLock(t.Context(), "res", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	other, nodes := newLocker()

	// First in sequence: MULTI on every node, then the TryLock.
	for _, n := range nodes {
		if _, err := n.Do(t.Context(), "MULTI"); !errors.Is(err, pool.ErrConnState) {
			t.Fatalf("MULTI: %v, want ErrConnState", err)
		}
	}
	if lk, err := other.TryLock(t.Context(), "res", time.Second); err == nil {
		t.Fatalf("TryLock after MULTI granted a held lock (until %v)", lk.Until())
	}
	// Then concurrently.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	multiErrs := make(chan error, 1)
	for _, n := range nodes {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := n.Do(t.Context(), "multi"); !errors.Is(err, pool.ErrConnState) {
					select {
					case multiErrs <- err:
					default:
					}
					return
				}
			}
		})
	}
	for i := range 50 {
		if lk, err := other.TryLock(t.Context(), "res", time.Second); err == nil {
			close(stop)
			wg.Wait()
			t.Fatalf("TryLock %d beside MULTI granted a held lock (until %v)", i, lk.Until())
		}
	}
	close(stop)
	wg.Wait()
	select {
	case err := <-multiErrs:
		t.Fatalf("concurrent MULTI: %v, want ErrConnState", err)
	default:
	}
	if err := held.Unlock(t.Context()); err != nil {
		t.Fatalf("the holder's Unlock: %v", err)
	}
}

// subcommand is an application's own string type for command words.
type subcommand string

// wordArg is an argument that tells its own wire form (redis.Argument).
type wordArg struct{ w string }

func (a wordArg) RedisArg() any { return a.w }

// The check judges each argument by the text that goes on the wire, not by
// its Go type: a named string type, a redis.Argument or a fmt.Stringer
// that spells REPLY or BLOCK is refused like the string itself. Before,
// CLIENT subcommand("REPLY") SKIP reached the master: it stopped answering
// two commands, every later reply went to the command two places earlier,
// and a TryLock of a held key was granted by another command's OK.
func TestConnStateCheckReadsTheWire(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv, n := start(t, redisproc.Options{}, cfg)
		// A command that got through would leave replies out of step:
		// every call is bounded, so that the test fails instead of hanging.
		bounded := func() context.Context {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
			t.Cleanup(cancel)
			return ctx
		}
		for _, c := range [][]any{
			{"CLIENT", subcommand("REPLY"), "SKIP"},
			{"CLIENT", wordArg{"reply"}, subcommand("OFF")},
			{"CLIENT", redis.Args{}.Add("TRACKING")[0], "ON"},
			{"CLIENT", stringer("Reply"), "SKIP"},
		} {
			if _, err := n.Do(bounded(), c[0].(string), c[1:]...); !errors.Is(err, pool.ErrConnState) {
				t.Errorf("%v: %v, want ErrConnState", c, err)
			}
		}
		if !cfg.Pooled {
			_, err := n.Do(bounded(), "XREAD", subcommand("BLOCK"), 10, "STREAMS", "s", "$")
			if !errors.Is(err, pool.ErrBlocking) {
				t.Errorf("XREAD subcommand(BLOCK): %v, want ErrBlocking", err)
			}
		}
		c, err := redis.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		stats, err := redis.String(c.Do("INFO", "commandstats"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"client|reply", "client|tracking", "xread"} {
			if strings.Contains(stats, "cmdstat_"+name+":") {
				t.Errorf("the master ran %s:\n%s", name, stats)
			}
		}

		// End to end: a held key is never granted to a TryLock after an
		// application tried to switch the shared connection's replies off.
		if _, err := n.Do(bounded(), "SET", "held", "other", "PX", 60000); err != nil {
			t.Fatal(err)
		}
		n.Do(bounded(), "CLIENT", subcommand("REPLY"), "SKIP")
		l, err := redlock.New([]redlock.Node{n}, redlock.Config{})
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if lk, err := l.TryLock(bounded(), "held", time.Minute); err == nil {
				t.Fatalf("TryLock of a held key granted (token %s)", lk.Token())
			}
		}
	})
}

// stringer prints itself through its String method, as fmt.Print does.
type stringer string

func (s stringer) String() string { return string(s) }
