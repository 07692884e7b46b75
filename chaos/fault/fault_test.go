package fault_test

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/netfault"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRandomIsReplayable(t *testing.T) {
	cfg := fault.RandomConfig{Nodes: 5, Clients: 4, Duration: 20 * time.Second,
		Kinds: []fault.Kind{fault.Kill, fault.Pause, fault.Cut, fault.Slow, fault.Restart}}
	a, b := fault.Random(42, cfg), fault.Random(42, cfg)
	if len(a) == 0 || !slices.EqualFunc(a, b, func(x, y fault.Fault) bool { return x.String() == y.String() && x.At == y.At }) {
		t.Fatalf("same seed, different schedules:\n%v\n%v", a, b)
	}
	if c := fault.Random(43, cfg); slices.EqualFunc(a, c, func(x, y fault.Fault) bool { return x.String() == y.String() && x.At == y.At }) {
		t.Error("seeds 42 and 43 drew the same schedule")
	}
}

// TestRandomInvariants checks, over many seeds, that a random schedule keeps
// at most MaxFaulty nodes faulty, ends every fault it injects before
// Duration, and keeps killed nodes down for DownFor.
func TestRandomInvariants(t *testing.T) {
	const unended = time.Duration(math.MaxInt64)
	for seed := range uint64(200) {
		cfg := fault.RandomConfig{Nodes: 5, Clients: 3, Duration: 10 * time.Second, DownFor: time.Second,
			Rejoin: 700 * time.Millisecond, Gap: 100 * time.Millisecond, Hold: 400 * time.Millisecond,
			Kinds: []fault.Kind{fault.Kill, fault.Pause, fault.Cut, fault.Slow, fault.Restart,
				fault.DropReply, fault.Reset, fault.SlowSetup, fault.Multi,
				fault.DelayRequests, fault.DelayReplies, fault.ScriptFlush, fault.RestartKept}}
		s := fault.Random(seed, cfg)
		faultyUntil := map[int]time.Duration{}
		killedAt := map[int]time.Duration{}
		for i, f := range s {
			if i > 0 && f.At < s[i-1].At {
				t.Fatalf("seed %d: schedule not ordered at %d", seed, i)
			}
			if f.At >= cfg.Duration {
				t.Fatalf("seed %d: %v at %v, after the duration", seed, f, f.At)
			}
			if f.Kind.Injects() && f.Kind != fault.Kill && f.Kind != fault.Restart && f.Kind != fault.Pause {
				for _, c := range f.Clients {
					if c < 0 || c >= cfg.Clients {
						t.Fatalf("seed %d: %v names client %d of %d", seed, f, c, cfg.Clients)
					}
				}
				if f.Kind == fault.SlowSetup && f.Arg != 40*time.Millisecond {
					t.Fatalf("seed %d: %v: RTT %v, want the default 40ms", seed, f, f.Arg)
				}
			}
			switch f.Kind {
			case fault.Reset, fault.ScriptFlush, fault.RestartKept:
				if faultyUntil[f.Node] > f.At {
					t.Fatalf("seed %d: %v at %v on a node still faulty", seed, f, f.At)
				}
				faultyUntil[f.Node] = f.At // instant
				if f.Kind == fault.RestartKept {
					faultyUntil[f.Node] += cfg.Rejoin // the clients' restart guard
				}
			case fault.Kill, fault.Pause, fault.Cut, fault.Slow, fault.Restart, fault.DropReply, fault.SlowSetup, fault.Multi,
				fault.DelayRequests, fault.DelayReplies:
				if faultyUntil[f.Node] > f.At {
					t.Fatalf("seed %d: %v at %v on a node still faulty", seed, f, f.At)
				}
				faultyUntil[f.Node] = unended // until its end is seen
				if f.Kind == fault.Restart {
					if f.Arg != cfg.DownFor {
						t.Fatalf("seed %d: %v: delay %v, want %v", seed, f, f.Arg, cfg.DownFor)
					}
					faultyUntil[f.Node] = f.At + f.Arg + cfg.Rejoin
				}
				if f.Kind == fault.Kill {
					killedAt[f.Node] = f.At
				}
			case fault.Start:
				if d := f.At - killedAt[f.Node]; d < cfg.DownFor {
					t.Fatalf("seed %d: node %d down for %v only", seed, f.Node, d)
				}
				faultyUntil[f.Node] = f.At + cfg.Rejoin
			case fault.Resume, fault.Heal:
				faultyUntil[f.Node] = f.At
			}
			faulty := 0
			for _, u := range faultyUntil {
				if u > f.At {
					faulty++
				}
			}
			if faulty > 2 {
				t.Fatalf("seed %d: %d nodes faulty at %v", seed, faulty, f.At)
			}
		}
		for node, u := range faultyUntil {
			if u == unended {
				t.Fatalf("seed %d: the fault on node %d never ends", seed, node)
			}
		}
	}
}

func TestFaultString(t *testing.T) {
	for _, tc := range []struct {
		f    fault.Fault
		want string
	}{
		{fault.Fault{Kind: fault.Kill, Node: 2}, "kill redis-2"},
		{fault.Fault{Kind: fault.Restart, Node: 1, Arg: time.Second}, "restart redis-1 after 1s"},
		{fault.Fault{Kind: fault.Cut, Node: 3, Clients: []int{0, 2}}, "cut redis-3 from clients 0,2"},
		{fault.Fault{Kind: fault.Slow, Node: 0, Clients: []int{1}, Arg: 30 * time.Millisecond}, "slow redis-0 by 30ms for client 1"},
		{fault.Fault{Kind: fault.Heal, Node: 0}, "heal redis-0 for all clients"},
		{fault.Fault{Kind: fault.ClockJump, Node: 4, Arg: 2 * time.Second}, "clock-jump redis-4 by +2s"},
		{fault.Fault{Kind: fault.ClockJump, Node: 4, Arg: -time.Second}, "clock-jump redis-4 by -1s"},
		{fault.Fault{Kind: fault.ClientPause, Node: -1, Clients: []int{0}, Arg: time.Second}, "pause client 0 for 1s"},
		{fault.Fault{Kind: fault.DropReply, Node: 1, Clients: []int{0, 2}}, "drop the next reply of redis-1 to clients 0,2"},
		{fault.Fault{Kind: fault.Reset, Node: 2}, "reset the connections of redis-2 to all clients"},
		{fault.Fault{Kind: fault.SlowSetup, Node: 0, Clients: []int{1}, Arg: 40 * time.Millisecond}, "slow-setup redis-0 to 40ms RTT for client 1"},
		{fault.Fault{Kind: fault.Multi, Node: 3, Clients: []int{0}}, "multi on redis-3 from client 0"},
		{fault.Fault{Kind: fault.DelayRequests, Node: 1, Clients: []int{2}, Arg: time.Second}, "delay the requests of client 2 to redis-1 by 1s"},
		{fault.Fault{Kind: fault.DelayReplies, Node: 1, Arg: 1500 * time.Millisecond}, "delay the replies of redis-1 to all clients by 1.5s"},
		{fault.Fault{Kind: fault.ScriptFlush, Node: 2}, "script-flush redis-2"},
		{fault.Fault{Kind: fault.RestartKept, Node: 0}, "restart redis-0 keeping its data"},
	} {
		if got := tc.f.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	s := fault.Schedule{{Kind: fault.Kill}, {Kind: fault.Start}, {Kind: fault.Cut}, {Kind: fault.Heal}, {Kind: fault.ClockJump},
		{Kind: fault.DropReply}, {Kind: fault.Reset}, {Kind: fault.SlowSetup}, {Kind: fault.Multi}, {Kind: fault.Resume},
		{Kind: fault.DelayRequests}, {Kind: fault.DelayReplies}, {Kind: fault.ScriptFlush}, {Kind: fault.RestartKept}}
	if s.Injections() != 11 {
		t.Errorf("Injections() = %d, want 11", s.Injections())
	}
}

func pingErr(addr string) error {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(time.Second),
		redis.DialReadTimeout(200*time.Millisecond), redis.DialWriteTimeout(200*time.Millisecond))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("PING")
	return err
}

func TestInjectorRunAndHealAll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 3})
	net, err := netfault.New(cluster.Addrs(c), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer net.Close()
	in := fault.NewInjector(c, net, time.Now())
	nodes := c.Nodes()

	s := fault.Schedule{
		{At: 0, Kind: fault.Kill, Node: 0},
		{At: 0, Kind: fault.Pause, Node: 1},
		{At: 0, Kind: fault.Cut, Node: 2, Clients: []int{1}},
		{At: 20 * time.Millisecond, Kind: fault.ClockJump, Node: 2, Arg: time.Second},
	}
	if err := in.Run(ctx, s); err != nil {
		t.Fatal(err)
	}
	if pingErr(nodes[0].Addr()) == nil || pingErr(nodes[1].Addr()) == nil {
		t.Error("killed or paused node answers")
	}
	if pingErr(net.Link(1, 2).Addr()) == nil {
		t.Error("cut link answers")
	}
	if err := pingErr(net.Link(0, 2).Addr()); err != nil {
		t.Errorf("link of a client that was not cut: %v", err)
	}
	if in.Injected() != 4 {
		t.Errorf("Injected() = %d, want 4", in.Injected())
	}

	if err := in.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	for c := range 2 {
		for i := range 3 {
			if err := pingErr(net.Link(c, i).Addr()); err != nil {
				t.Errorf("after HealAll, client %d to node %d: %v", c, i, err)
			}
		}
	}
	log := in.Log()
	var kinds []string
	for _, a := range log {
		if a.Err != "" {
			t.Errorf("%v: %s", a.Fault, a.Err)
		}
		kinds = append(kinds, string(a.Kind))
	}
	slices.Sort(kinds)
	if want := []string{"clock-jump", "cut", "kill", "pause", "resume", "start"}; !slices.Equal(kinds, want) {
		t.Errorf("log kinds %v, want %v", kinds, want)
	}
	for _, a := range log {
		if a.Kind == fault.ClockJump && !strings.Contains(a.Note, "expired") {
			t.Errorf("clock jump note %q", a.Note)
		}
	}

	// A bad node and a cancelled run are errors, not panics.
	if err := in.Apply(ctx, fault.Fault{Kind: fault.Kill, Node: 7}); err == nil {
		t.Error("fault on node 7 of 3: nil error")
	}
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if err := in.Run(cctx, fault.Schedule{{At: time.Hour, Kind: fault.Kill, Node: 0}}); err != nil {
		t.Errorf("cancelled run: %v", err)
	}
	if pingErr(nodes[0].Addr()) != nil {
		t.Error("a cancelled run applied its fault")
	}
}
