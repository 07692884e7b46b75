package fault_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/netfault"
)

// runSetup starts three masters without a password, one client's proxies
// and an injector over them.
func runSetup(t *testing.T) ([]cluster.Node, *netfault.Net, *fault.Injector) {
	t.Helper()
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 3})
	net, err := netfault.New(cluster.Addrs(c), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(net.Close)
	return c.Nodes(), net, fault.NewInjector(c, net, time.Now())
}

// TestRunAppliesFaultsWithinARestartsDelay checks that the faults a
// schedule places within a restart's delay go in before the restart's
// start, not behind it, and that the restart is logged once, from its kill
// to its start.
func TestRunAppliesFaultsWithinARestartsDelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes, net, in := runSetup(t)
	s := fault.Schedule{
		{At: 0, Kind: fault.Restart, Node: 0, Arg: 300 * time.Millisecond},
		{At: 10 * time.Millisecond, Kind: fault.Cut, Node: 1},
		{At: 20 * time.Millisecond, Kind: fault.Heal, Node: 1},
	}
	if err := in.Run(ctx, s); err != nil {
		t.Fatal(err)
	}
	restart, cut := logEntry(t, in, fault.Restart), logEntry(t, in, fault.Cut)
	if restart.Err != "" || restart.Note != "" {
		t.Errorf("restart logged with error %q, note %q", restart.Err, restart.Note)
	}
	if cut.Start >= restart.End {
		t.Errorf("the cut at 10ms went in at %v, behind the restart's start (ended %v)", cut.Start, restart.End)
	}
	if restart.End-restart.Start < s[0].Arg {
		t.Errorf("restart logged from %v to %v, shorter than its delay %v", restart.Start, restart.End, s[0].Arg)
	}
	if got := in.Injected(); got != 2 {
		t.Errorf("Injected() = %d, want 2 (the restart and the cut)", got)
	}
	if err := pingErr(nodes[0].Addr()); err != nil {
		t.Errorf("restarted node: %v", err)
	}
	if err := pingErr(net.Link(0, 1).Addr()); err != nil {
		t.Errorf("healed link: %v", err)
	}
}

// TestRunEndsWithinARestartsDelay checks a run that ends between a
// restart's kill and its start: the faults after the kill went in, the
// restart is logged as injected with a note, and HealAll starts the node.
func TestRunEndsWithinARestartsDelay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	nodes, net, in := runSetup(t)
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- in.Run(rctx, fault.Schedule{
			{At: 0, Kind: fault.Restart, Node: 0, Arg: time.Hour},
			{At: 0, Kind: fault.Cut, Node: 1},
		})
	}()
	for cut := false; !cut; {
		for _, a := range in.Log() {
			cut = cut || a.Kind == fault.Cut
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the cut scheduled within the restart's delay did not go in: %v", in.Log())
		case <-time.After(5 * time.Millisecond):
		}
	}
	stop()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	restart := logEntry(t, in, fault.Restart)
	if restart.Err != "" || !strings.Contains(restart.Note, "ended before the start") {
		t.Errorf("restart logged with error %q, note %q", restart.Err, restart.Note)
	}
	if got := in.Injected(); got != 2 {
		t.Errorf("Injected() = %d, want 2", got)
	}
	if pingErr(nodes[0].Addr()) == nil || pingErr(net.Link(0, 1).Addr()) == nil {
		t.Fatal("the killed node or the cut link answers")
	}
	if err := in.HealAll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pingErr(nodes[0].Addr()); err != nil {
		t.Errorf("after HealAll: %v", err)
	}
}

// TestRunRefusesARestartOfNoNode checks that a restart of a node the
// injector does not have is refused at its kill, as Apply refuses any
// fault of such a node, and that its start step then does nothing.
func TestRunRefusesARestartOfNoNode(t *testing.T) {
	_, _, in := runSetup(t)
	err := in.Run(t.Context(), fault.Schedule{{At: 0, Kind: fault.Restart, Node: 7, Arg: time.Millisecond}})
	if err == nil || !strings.Contains(err.Error(), "no node 7") {
		t.Errorf("Run = %v, want the error of no node 7", err)
	}
	if log := in.Log(); len(log) != 0 {
		t.Errorf("log %v, want nothing logged", log)
	}
}
