package fault_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
)

// lateBy is the delay of these tests: far longer than anything else they
// wait for, so that what they order by it is ordered on any machine.
const lateBy = 2 * time.Second

// awaitGet polls key on the node at addr until it holds want, and
// returns the values seen on the way (chaostest.AwaitValue).
func awaitGet(t *testing.T, addr, password, key, want string) []string {
	t.Helper()
	rc := dialAuth(t, addr, password)
	return chaostest.AwaitValue(t, want, func() string {
		v, _ := redis.String(rc.Do("GET", key))
		return v
	})
}

// TestInjectorDelayRequests: the command of a connection whose requests
// are delayed reaches the node after the client gave up on it and set
// the key again over a new connection; Heal does not hurry it.
func TestInjectorDelayRequests(t *testing.T) {
	ctx := t.Context()
	c, n, in := setup(t, 1, 2)
	pw := c.Password()
	old := dialAuth(t, n.Link(0, 0).Addr(), pw)
	other := dialAuth(t, n.Link(1, 0).Addr(), pw)
	if err := in.Apply(ctx, fault.Fault{Kind: fault.DelayRequests, Node: 0, Clients: []int{0}, Arg: lateBy}); err != nil {
		t.Fatal(err)
	}
	if note := logEntry(t, in, fault.DelayRequests).Note; !strings.HasPrefix(note, "1 open connections delayed") {
		t.Errorf("note %q", note)
	}
	if err := old.Send("SET", "k", "late"); err != nil {
		t.Fatal(err)
	}
	if err := old.Flush(); err != nil {
		t.Fatal(err)
	}
	old.Close() // gave up on it
	if _, err := other.Do("SET", "k", "other"); err != nil {
		t.Fatalf("a client the delay does not name: %v", err)
	}
	fresh := dialAuth(t, n.Link(0, 0).Addr(), pw) // a new connection: not delayed
	if _, err := fresh.Do("SET", "k", "early"); err != nil {
		t.Fatal(err)
	}
	if err := in.Apply(ctx, fault.Fault{Kind: fault.Heal, Node: 0, Clients: []int{0}}); err != nil {
		t.Fatal(err)
	}
	seen := awaitGet(t, c.Nodes()[0].Addr(), pw, "k", "late")
	if len(seen) < 2 || seen[len(seen)-2] != "early" {
		t.Errorf("values of k: %v; want the late SET to land after the new connection's", seen)
	}
	if in.Injected() != 1 {
		t.Errorf("Injected() = %d, want 1", in.Injected())
	}
}

// TestInjectorDelayReplies: the node runs the command at once; the reply
// comes after the client's read gave up.
func TestInjectorDelayReplies(t *testing.T) {
	ctx := t.Context()
	c, n, in := setup(t, 1, 1)
	pw := c.Password()
	rc, err := redis.Dial("tcp", n.Link(0, 0).Addr(), redis.DialPassword(pw), redis.DialReadTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if err := in.Apply(ctx, fault.Fault{Kind: fault.DelayReplies, Node: 0, Arg: lateBy}); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Do("INCR", "n"); err == nil {
		t.Fatal("INCR whose reply is late: nil error, want a timeout")
	}
	awaitGet(t, c.Nodes()[0].Addr(), pw, "n", "1")
	if err := in.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	fresh := dialAuth(t, n.Link(0, 0).Addr(), pw)
	if v, err := redis.Int(fresh.Do("INCR", "n")); err != nil || v != 2 {
		t.Errorf("INCR after the heal = %d, %v; want 2", v, err)
	}
}

// TestInjectorScriptFlush: the node forgets its scripts.
func TestInjectorScriptFlush(t *testing.T) {
	ctx := t.Context()
	c, _, in := setup(t, 2, 1)
	rc := dialAuth(t, c.Nodes()[1].Addr(), c.Password())
	sha, err := redis.String(rc.Do("SCRIPT", "LOAD", "return 1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Apply(ctx, fault.Fault{Kind: fault.ScriptFlush, Node: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Do("EVALSHA", sha, 0); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Errorf("EVALSHA after script-flush: %v, want NOSCRIPT", err)
	}
	if a := logEntry(t, in, fault.ScriptFlush); a.Err != "" || a.String() != "script-flush redis-1" {
		t.Errorf("log entry %+v (%s)", a, a)
	}
}

// TestInjectorRestartKept: the node comes back with its keys and without
// its scripts.
func TestInjectorRestartKept(t *testing.T) {
	ctx := t.Context()
	c, _, in := setup(t, 1, 1)
	addr, pw := c.Nodes()[0].Addr(), c.Password()
	rc := dialAuth(t, addr, pw)
	if _, err := rc.Do("SET", "lock", "token", "PX", 60000); err != nil {
		t.Fatal(err)
	}
	sha, err := redis.String(rc.Do("SCRIPT", "LOAD", "return 1"))
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Apply(ctx, fault.Fault{Kind: fault.RestartKept, Node: 0}); err != nil {
		t.Fatal(err)
	}
	after := dialAuth(t, addr, pw)
	if v, err := redis.String(after.Do("GET", "lock")); err != nil || v != "token" {
		t.Errorf("lock after restart-kept = %q, %v; want its token", v, err)
	}
	if _, err := after.Do("EVALSHA", sha, 0); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Errorf("EVALSHA after restart-kept: %v, want NOSCRIPT", err)
	}
	if in.Injected() != 1 {
		t.Errorf("Injected() = %d, want 1", in.Injected())
	}
}

// plainNodes is a cluster whose nodes can only do what cluster.Node says:
// none can restart keeping its data.
type plainNodes struct{ cluster.Cluster }

type plainNode struct{ cluster.Node }

func (p plainNodes) Nodes() []cluster.Node {
	var out []cluster.Node
	for _, n := range p.Cluster.Nodes() {
		out = append(out, plainNode{n})
	}
	return out
}

// TestInjectorRestartKeptUnsupported: a backend that cannot restart a
// node keeping its data logs the fault as not injected, and the run goes
// on.
func TestInjectorRestartKeptUnsupported(t *testing.T) {
	ctx := t.Context()
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1})
	in := fault.NewInjector(plainNodes{c}, nil, time.Now())
	if err := in.Apply(ctx, fault.Fault{Kind: fault.RestartKept, Node: 0}); err != nil {
		t.Fatalf("Apply = %v, want nil (logged, not injected)", err)
	}
	if a := logEntry(t, in, fault.RestartKept); !strings.Contains(a.Err, "unsupported") {
		t.Errorf("log entry %+v, want the unsupported error", a)
	}
	if in.Injected() != 0 {
		t.Errorf("Injected() = %d, want 0", in.Injected())
	}
	if err := in.HealAll(ctx); err != nil {
		t.Errorf("HealAll after an unsupported restart: %v", err)
	}
}

// TestRandomDelays checks the delays a random schedule draws: each in
// [Delay/2, 3Delay/2], healed before Duration, and its node faulty until
// the delayed bytes arrived.
func TestRandomDelays(t *testing.T) {
	const delay = 800 * time.Millisecond
	seen := map[fault.Kind]int{}
	for seed := range uint64(100) {
		cfg := fault.RandomConfig{Nodes: 5, Clients: 3, Duration: 5 * time.Second, Delay: delay, MaxFaulty: 2,
			Kinds: []fault.Kind{fault.DelayRequests, fault.DelayReplies, fault.ScriptFlush, fault.RestartKept}}
		s := fault.Random(seed, cfg)
		lastBytes := map[int]time.Duration{} // per node: when its delayed bytes are all in
		for i, f := range s {
			seen[f.Kind]++
			if f.At >= cfg.Duration {
				t.Fatalf("seed %d: %v at %v, after the duration", seed, f, f.At)
			}
			if f.Kind.Injects() && lastBytes[f.Node] > f.At {
				t.Fatalf("seed %d: %v at %v while the bytes of the last delay on its node arrive until %v", seed, f, f.At, lastBytes[f.Node])
			}
			switch f.Kind {
			case fault.DelayRequests, fault.DelayReplies:
				if f.Arg < delay/2 || f.Arg > 3*delay/2 {
					t.Fatalf("seed %d: %v: delay %v out of [%v, %v]", seed, f, f.Arg, delay/2, 3*delay/2)
				}
				heal := -1
				for j := i + 1; j < len(s); j++ {
					if s[j].Kind == fault.Heal && s[j].Node == f.Node {
						heal = j
						break
					}
				}
				if heal < 0 || !slices.Equal(s[heal].Clients, f.Clients) {
					t.Fatalf("seed %d: %v never healed for its clients", seed, f)
				}
				lastBytes[f.Node] = s[heal].At + f.Arg
			case fault.ScriptFlush, fault.RestartKept:
				if f.Arg != 0 || f.Clients != nil {
					t.Fatalf("seed %d: %v has an argument or clients", seed, f)
				}
			}
		}
	}
	for _, k := range []fault.Kind{fault.DelayRequests, fault.DelayReplies, fault.ScriptFlush, fault.RestartKept, fault.Heal} {
		if seen[k] == 0 {
			t.Errorf("no %s drawn in 100 schedules", k)
		}
	}
}

// TestClientDelays checks the per-client delays: every node's link of one
// client at once, within the run, healed, replayable.
func TestClientDelays(t *testing.T) {
	const d = 10 * time.Second
	s := fault.ClientDelays(9, 4, 5, d)
	if !slices.EqualFunc(s, fault.ClientDelays(9, 4, 5, d), func(a, b fault.Fault) bool { return a.String() == b.String() && a.At == b.At }) {
		t.Fatal("one seed, two schedules")
	}
	if len(s) < 5*2*5 {
		t.Fatalf("%d faults over %v, want at least 5 delays of 5 links", len(s), d)
	}
	for i := 0; i < len(s); i += 10 {
		group := s[i : i+10]
		for j, f := range group[:5] {
			if (f.Kind != fault.DelayRequests && f.Kind != fault.DelayReplies) || f.Node != j || len(f.Clients) != 1 ||
				f.Clients[0] != group[0].Clients[0] || f.Arg < fault.DefaultDelay/2 || f.Arg > 3*fault.DefaultDelay/2 || f.At != group[0].At {
				t.Fatalf("fault %d: %v at %v", i+j, f, f.At)
			}
			if h := group[5+j]; h.Kind != fault.Heal || h.Node != j || h.Clients[0] != f.Clients[0] || h.At <= f.At || h.At >= d {
				t.Fatalf("heal %d: %v at %v", i+5+j, h, h.At)
			}
		}
	}
	if len(fault.ClientDelays(1, 0, 5, d)) != 0 {
		t.Error("delays drawn for no client")
	}
}
