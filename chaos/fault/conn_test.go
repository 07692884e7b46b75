package fault_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/netfault"
	"github.com/quorumlock/quorumlock/pool"
)

// setup starts nodes masters (with a password) and proxies for clients
// clients, and an injector over them.
func setup(t *testing.T, nodes, clients int) (cluster.Cluster, *netfault.Net, *fault.Injector) {
	t.Helper()
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: nodes, Password: "fault-secret"})
	n, err := netfault.New(cluster.Addrs(c), clients)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.Close)
	return c, n, fault.NewInjector(c, n, time.Now())
}

func dialAuth(t *testing.T, addr, password string) redis.Conn {
	t.Helper()
	rc, err := redis.Dial("tcp", addr, redis.DialPassword(password), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rc.Close() })
	return rc
}

func logEntry(t *testing.T, in *fault.Injector, k fault.Kind) fault.Applied {
	t.Helper()
	var found []fault.Applied
	for _, a := range in.Log() {
		if a.Kind == k {
			found = append(found, a)
		}
	}
	if len(found) == 0 {
		t.Fatalf("no %s in the log %v", k, in.Log())
	}
	return found[len(found)-1]
}

// TestInjectorDropReplyAndReset checks DropReply (the node runs the
// request, the client sees a reset) and Reset (every connection of the
// chosen clients reset, the others untouched) through the injector.
func TestInjectorDropReplyAndReset(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, n, in := setup(t, 2, 2)
	pw := c.Password()
	victim := dialAuth(t, n.Link(0, 1).Addr(), pw) // set up before the drop is armed
	other := dialAuth(t, n.Link(1, 1).Addr(), pw)

	if err := in.Apply(ctx, fault.Fault{Kind: fault.DropReply, Node: 1, Clients: []int{0}}); err != nil {
		t.Fatal(err)
	}
	if v, err := redis.Int(other.Do("INCR", "ran")); err != nil || v != 1 {
		t.Fatalf("INCR from a client the drop does not name = %d, %v; want 1", v, err)
	}
	if _, err := victim.Do("INCR", "ran"); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("INCR whose reply is dropped: %v, want ECONNRESET", err)
	}
	if v, _ := redis.Int(other.Do("GET", "ran")); v != 2 {
		t.Errorf("counter %d after the dropped INCR, want 2 (the node ran it)", v)
	}
	if st := n.Link(0, 1).Stats(); st.Dropped != 1 {
		t.Errorf("link stats %+v, want 1 dropped", st)
	}

	// Reset: client 0's connections to node 0 are reset, client 1's are not.
	a := dialAuth(t, n.Link(0, 0).Addr(), pw)
	b := dialAuth(t, n.Link(1, 0).Addr(), pw)
	if err := in.Apply(ctx, fault.Fault{Kind: fault.Reset, Node: 0, Clients: []int{0}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Do("PING"); err == nil {
		t.Error("PING on a reset connection: nil error")
	}
	if _, err := b.Do("PING"); err != nil {
		t.Errorf("PING on a connection the reset does not name: %v", err)
	}
	if note := logEntry(t, in, fault.Reset).Note; note != "1 connections reset" {
		t.Errorf("reset note %q", note)
	}
	if in.Injected() != 2 {
		t.Errorf("Injected() = %d, want 2", in.Injected())
	}
}

// TestInjectorSlowSetup checks that SlowSetup resets the connections, so
// that a client dials anew, and that the new dial pays the round trip for
// its connect and its AUTH; Heal ends it. Only lower bounds are asserted.
func TestInjectorSlowSetup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, n, in := setup(t, 1, 1)
	before := dialAuth(t, n.Link(0, 0).Addr(), c.Password())
	const rtt = 60 * time.Millisecond
	if err := in.Apply(ctx, fault.Fault{Kind: fault.SlowSetup, Node: 0, Arg: rtt}); err != nil {
		t.Fatal(err)
	}
	if _, err := before.Do("PING"); err == nil {
		t.Error("a connection made before SlowSetup survived it")
	}
	if note := logEntry(t, in, fault.SlowSetup).Note; note != "1 connections reset" {
		t.Errorf("slow-setup note %q", note)
	}
	start := time.Now()
	dialAuth(t, n.Link(0, 0).Addr(), c.Password())
	if el := time.Since(start); el < 2*rtt {
		t.Errorf("dial with AUTH under SlowSetup took %v, less than connect+AUTH = %v", el, 2*rtt)
	}
	if err := in.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pingErr(n.Link(0, 0).Addr()); err == nil || !strings.Contains(err.Error(), "NOAUTH") {
		t.Errorf("PING without AUTH after HealAll: %v, want NOAUTH (the link works again)", err)
	}
}

// TestInjectorMultiRefused sends MULTI through the library's shared
// pipelined node, as the chaos workload does: the library refuses it, the
// injector notes the refusal, and the node keeps serving other callers.
func TestInjectorMultiRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, n, in := setup(t, 1, 2)
	nodes := make([]*pool.Node, 2)
	for i := range nodes {
		nodes[i] = pool.New(pool.Config{Addr: n.Link(i, 0).Addr(), Password: c.Password()})
		defer nodes[i].Close()
	}
	if err := in.Apply(ctx, fault.Fault{Kind: fault.Multi, Node: 0}); err == nil {
		t.Error("Multi without SendCommand: nil error")
	}
	in.SendCommand = func(ctx context.Context, client, node int, cmd string, args ...any) error {
		_, err := nodes[client].Do(ctx, cmd, args...)
		return err
	}
	if err := in.Apply(ctx, fault.Fault{Kind: fault.Multi, Node: 0}); err != nil {
		t.Fatal(err)
	}
	note := logEntry(t, in, fault.Multi).Note
	if strings.Count(note, "refused") != 2 || !strings.Contains(note, "client 0") || !strings.Contains(note, "client 1") {
		t.Errorf("multi note %q, want both clients refused", note)
	}
	if v, err := redis.String(nodes[0].Do(ctx, "SET", "after-multi", "v")); err != nil || v != "OK" {
		t.Errorf("SET on the shared node after the MULTI = %q, %v; want OK", v, err)
	}
	if err := in.Apply(ctx, fault.Fault{Kind: fault.Heal, Node: 0}); err != nil {
		t.Fatal(err)
	}
	if note := logEntry(t, in, fault.Heal).Note; note != "" {
		t.Errorf("heal after a refused MULTI sent something: %q", note)
	}
}

// TestInjectorMultiAcceptedIsDiscarded checks the injector's undo with a
// connection that does accept MULTI (a plain redigo connection standing for
// a library without the guard): while the fault holds, the connection is in
// a transaction (a SET is QUEUED); Heal sends DISCARD through it.
func TestInjectorMultiAcceptedIsDiscarded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, n, in := setup(t, 1, 1)
	shared := dialAuth(t, n.Link(0, 0).Addr(), c.Password())
	var mu sync.Mutex
	var sent []string
	in.SendCommand = func(ctx context.Context, client, node int, cmd string, args ...any) error {
		mu.Lock()
		defer mu.Unlock()
		sent = append(sent, cmd)
		_, err := shared.Do(cmd, args...)
		return err
	}
	if err := in.Apply(ctx, fault.Fault{Kind: fault.Multi, Node: 0, Clients: []int{0}}); err != nil {
		t.Fatal(err)
	}
	if note := logEntry(t, in, fault.Multi).Note; !strings.Contains(note, "ACCEPTED") {
		t.Errorf("multi note %q, want ACCEPTED", note)
	}
	mu.Lock()
	if v, err := redis.String(shared.Do("SET", "k", "v")); err != nil || v != "QUEUED" {
		t.Errorf("SET inside the accepted MULTI = %q, %v; want QUEUED", v, err)
	}
	mu.Unlock()
	if err := in.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	if note := logEntry(t, in, fault.Heal).Note; note != "client 0: DISCARD ok" {
		t.Errorf("heal note %q", note)
	}
	if v, err := redis.String(shared.Do("SET", "k", "v")); err != nil || v != "OK" {
		t.Errorf("SET after the DISCARD = %q, %v; want OK", v, err)
	}
	if err := in.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"MULTI", "DISCARD"}; strings.Join(sent, ",") != strings.Join(want, ",") {
		t.Errorf("sent %v, want %v (one DISCARD, not one per HealAll)", sent, want)
	}
}
