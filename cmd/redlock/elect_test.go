package main_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// leader is one leader line of redlock elect.
type leader struct {
	Name  string
	Term  int64
	Value string
}

var leaderLine = regexp.MustCompile(`(?m)^(\S+) term=(\d+) value=(\S+)$`)

// leaders parses elect's text output: its leader lines, in order.
func leaders(out string) []leader {
	var ls []leader
	for _, m := range leaderLine.FindAllStringSubmatch(out, -1) {
		term, _ := strconv.ParseInt(m[2], 10, 64)
		ls = append(ls, leader{m[1], term, m[3]})
	}
	return ls
}

// jsonLeaders parses elect --json's output: one JSON object a line.
func jsonLeaders(t *testing.T, out string) []leader {
	t.Helper()
	var ls []leader
	for line := range strings.Lines(out) {
		var l leader
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("line %q is not a JSON leader: %v", line, err)
		}
		ls = append(ls, l)
	}
	return ls
}

// elected waits for b's leader line and returns it.
func elected(t *testing.T, b *bgRun) leader {
	t.Helper()
	await(t, "the leader line", func() bool { return len(leaders(b.out.String())) > 0 })
	return leaders(b.out.String())[0]
}

// signal sends sig to the background redlock.
func (b *bgRun) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := b.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// TestElectPrintsItsTerm: elect prints its leader line once elected; the
// term is the election's, as the library reads it, and the holder record
// (inspect) carries the value and the term. A signal resigns: status 0,
// the lock and its record gone, the fencing counter kept.
func TestElectPrintsItsTerm(t *testing.T) {
	ctx := context.Background()
	c := startCluster(t, 3, redisproc.Options{})
	a := background(t, c.nodes, "elect", "--ttl", "5s", "sched", "host-a")
	got := elected(t, a)
	if got.Name != "sched" || got.Value != "host-a" || got.Term <= 0 {
		t.Fatalf("leader line %+v", got)
	}
	el, err := redlock.NewElection(c.locker(t, redlock.Config{}), "sched", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ldr, err := el.Leader(ctx); err != nil || ldr.Term != got.Term || ldr.Value != "host-a" {
		t.Fatalf("the library reads leader %+v (%v), elect printed %+v", ldr, err, got)
	}
	rep := inspect(t, c, "sched")
	if !rep.Held || rep.Holders[0].Record == nil || rep.Holders[0].Record.Metadata["value"] != "host-a" ||
		rep.Holders[0].Record.Metadata["term"] != strconv.FormatInt(got.Term, 10) {
		t.Fatalf("inspect: %+v", rep)
	}
	if text := redlockRun(t, c.nodes, "inspect", "sched").stdout; !strings.Contains(text, "metadata: rev=0, term="+strconv.FormatInt(got.Term, 10)+", value=host-a") {
		t.Errorf("inspect's text:\n%s", text)
	}
	a.signal(t, os.Interrupt)
	if res := a.finish(t); res.code != 0 || res.stderr != "" || len(leaders(res.stdout)) != 1 {
		t.Fatalf("elect: status %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if c.exists(t, "sched")+c.exists(t, layout.Holder("sched")) != 0 || c.exists(t, layout.Fence("sched")) != 3 {
		t.Fatal("after the resignation: want the lock and its record gone, the fencing counter kept")
	}
}

// TestElectTakesOverInTermOrder: a second candidate waits while the first
// leads, and takes over with a higher term once the first is interrupted;
// a third, interrupted while waiting, exits 128+SIGINT and never leads;
// listeners (text and --json) print both leaders, in term order, once
// each.
func TestElectTakesOverInTermOrder(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	listen := background(t, c.nodes, "elect", "--listen", "sched")
	listenJSON := background(t, c.nodes, "elect", "-l", "--json", "sched")
	a := background(t, c.nodes, "elect", "sched", "host-a")
	first := elected(t, a)
	await(t, "the listener to see the first leader", func() bool { return len(leaders(listen.out.String())) == 1 })
	b := background(t, c.nodes, "elect", "sched", "host-b")
	waiting := background(t, c.nodes, "elect", "sched", "host-c")
	time.Sleep(300 * time.Millisecond)
	if b.out.String() != "" || waiting.out.String() != "" {
		t.Fatalf("a candidate leads beside the leader: %q, %q", b.out.String(), waiting.out.String())
	}
	waiting.signal(t, os.Interrupt)
	if res := waiting.finish(t); res.code != 128+int(syscall.SIGINT) || res.stdout != "" || !strings.Contains(res.stderr, "while waiting to lead") {
		t.Fatalf("the interrupted candidate: status %d, stdout %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	a.signal(t, syscall.SIGTERM)
	if res := a.finish(t); res.code != 0 {
		t.Fatalf("first leader: status %d, stderr %q", res.code, res.stderr)
	}
	second := elected(t, b)
	if second.Value != "host-b" || second.Term <= first.Term {
		t.Fatalf("second leader %+v after %+v: want a higher term", second, first)
	}
	want := []leader{first, second}
	await(t, "the listeners to see the second leader", func() bool {
		return len(leaders(listen.out.String())) == 2 && strings.Count(listenJSON.out.String(), "\n") == 2
	})
	b.signal(t, os.Interrupt)
	if res := b.finish(t); res.code != 0 {
		t.Fatalf("second leader: status %d, stderr %q", res.code, res.stderr)
	}
	time.Sleep(100 * time.Millisecond) // no leader more to print
	for _, l := range []*bgRun{listen, listenJSON} {
		l.signal(t, os.Interrupt)
	}
	res := listen.finish(t)
	if got := leaders(res.stdout); res.code != 0 || res.stderr != "" || !equalLeaders(got, want) || strings.Count(res.stdout, "\n") != 2 {
		t.Errorf("listener: status %d, stderr %q, leaders %+v, want %+v", res.code, res.stderr, got, want)
	}
	res = listenJSON.finish(t)
	if got := jsonLeaders(t, res.stdout); res.code != 0 || !equalLeaders(got, want) {
		t.Errorf("listener --json: status %d, stderr %q, leaders %+v, want %+v", res.code, res.stderr, got, want)
	}
}

func equalLeaders(a, b []leader) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestElectSaysWhenLeadershipIsLost: a leader whose lock is forced away
// learns it at its next renewal, says so and exits 75; with --json its
// result on stderr says "lost".
func TestElectSaysWhenLeadershipIsLost(t *testing.T) {
	c := startCluster(t, 3, redisproc.Options{})
	a := background(t, c.nodes, "elect", "--ttl", "3s", "--json", "sched", "host-a")
	await(t, "the leader line", func() bool { return strings.Contains(a.out.String(), "\n") })
	got := jsonLeaders(t, a.out.String())
	if len(got) != 1 || got[0].Name != "sched" || got[0].Value != "host-a" || got[0].Term <= 0 {
		t.Fatalf("leader line %q", a.out.String())
	}
	if r := redlockRun(t, c.nodes, "unlock", "--force", "sched"); r.code != 0 {
		t.Fatalf("unlock --force: status %d, output %q", r.code, r.stdout)
	}
	res := a.finish(t)
	var out struct {
		Name, Value, Outcome, Error string
		Elected                     bool
		Term                        int64
		ExitCode                    int `json:"exit_code"`
	}
	decode(t, res.stderr, &out)
	if res.code != 75 || out.Outcome != "lost" || out.ExitCode != 75 || !out.Elected || out.Term != got[0].Term || !strings.Contains(out.Error, "lost the leadership") {
		t.Fatalf("status %d, stderr %q", res.code, res.stderr)
	}
}

// TestElectBadInput: bad usage is one line on stderr and status 64, and
// sends nothing to the masters (the node list names a listener that
// counts its connections).
func TestElectBadInput(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no NAME", []string{"elect"}, "no NAME"},
		{"empty NAME", []string{"elect", "", "v"}, "no NAME"},
		{"listen without NAME", []string{"elect", "--listen"}, "no NAME"},
		{"VALUE with --listen", []string{"elect", "--listen", "sched", "host-a"}, "--listen takes no VALUE"},
		{"VALUE with -l after it", []string{"elect", "sched", "host-a", "-l"}, "--listen takes no VALUE"},
		{"no VALUE", []string{"elect", "sched"}, "no VALUE"},
		{"one argument too many", []string{"elect", "sched", "host-a", "more"}, "unexpected argument"},
		{"VALUE too long", []string{"elect", "sched", strings.Repeat("v", redlock.MaxMetadataLen)}, "VALUE longer than"},
		{"bad ttl", []string{"elect", "--ttl", "soon", "sched", "host-a"}, "bad duration"},
		{"bad flag", []string{"elect", "--bogus", "sched", "host-a"}, "bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := redlockRun(t, ln.Addr().String(), tc.args...)
			if r.code != 64 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.HasPrefix(r.stderr, "redlock: elect: ") || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("status %d, stdout %q, stderr %q: want 64 and one line saying %q", r.code, r.stdout, r.stderr, tc.want)
			}
		})
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("bad usage connected to the masters %d times", n)
	}
}
