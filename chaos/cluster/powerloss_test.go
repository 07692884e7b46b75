package cluster_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
)

// TestPowerLoss: a write made after the Sync is lost with the power, one
// made before it is kept; a plain Kill keeps both (the page cache survives
// a killed process).
func TestPowerLoss(t *testing.T) {
	ctx := ctxT(t)
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1, Persistence: cluster.PersistenceEverysec})
	n := c.Nodes()[0]
	if n.Persistent() {
		t.Error("an everysec node reports itself persistent")
	}
	mustDo(t, n.Addr(), "SET", "kept", "1")
	s, err := cluster.Sync(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, n.Addr(), "SET", "lost", "1")
	lost, err := cluster.PowerLoss(ctx, n, s)
	if err != nil {
		t.Fatal(err)
	}
	if lost <= 0 {
		t.Errorf("the power loss cut %d bytes, want the write after the sync", lost)
	}
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(t, n.Addr(), "kept") || exists(t, n.Addr(), "lost") {
		t.Errorf("after the power loss: kept %t (want true), lost %t (want false)", exists(t, n.Addr(), "kept"), exists(t, n.Addr(), "lost"))
	}

	mustDo(t, n.Addr(), "SET", "killed", "1")
	if err := cluster.Restart(ctx, n, 0); err != nil {
		t.Fatal(err)
	}
	if !exists(t, n.Addr(), "killed") {
		t.Error("a killed everysec master lost a write: the page cache should keep it")
	}
}

// TestPowerLossLate: a power loss past FsyncWindow after its Sync is
// refused (the master may have fsynced since), and leaves the node up.
func TestPowerLossLate(t *testing.T) {
	ctx := ctxT(t)
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1, Persistence: cluster.PersistenceEverysec})
	n := c.Nodes()[0]
	s, err := cluster.Sync(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(cluster.FsyncWindow + 10*time.Millisecond) // the window itself is what is tested
	if _, err := cluster.PowerLoss(ctx, n, s); !errors.Is(err, cluster.ErrLateLoss) {
		t.Errorf("late power loss: %v, want ErrLateLoss", err)
	}
	mustDo(t, n.Addr(), "PING")
}

// TestPowerLossUnsupported: nodes without everysec cannot lose power.
func TestPowerLossUnsupported(t *testing.T) {
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1, Persistence: cluster.PersistenceAOF})
	if _, err := cluster.Sync(ctxT(t), c.Nodes()[0]); !errors.Is(err, cluster.ErrUnsupported) {
		t.Errorf("Sync of an appendfsync always node: %v, want ErrUnsupported", err)
	}
}

// TestWaitAOFServer: a server with WAITAOF is found where one is
// installed, and the answer says why where none is.
func TestWaitAOFServer(t *testing.T) {
	bin, err := cluster.WaitAOFServer("")
	if err != nil {
		if !errors.Is(err, cluster.ErrUnsupported) {
			t.Fatalf("WaitAOFServer: %v, want ErrUnsupported when none is found", err)
		}
		t.Skip(err)
	}
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1, Server: bin, Persistence: cluster.PersistenceEverysec})
	mustDo(t, c.Nodes()[0].Addr(), "SET", "k", "v")
	if _, err := do(t, c.Nodes()[0].Addr(), "WAITAOF", 1, 0, 100); err != nil {
		t.Errorf("%s does not answer WAITAOF: %v", bin, err)
	}
	if _, err := cluster.WaitAOFServer("no-such-server-binary"); err != nil && !errors.Is(err, cluster.ErrUnsupported) {
		t.Errorf("WaitAOFServer of a missing binary: %v", err)
	}
}

// TestWaitAOFEarly reports what the server here does: a Valkey that
// acknowledges WAITAOF before the fsync, or a server that waits for it.
func TestWaitAOFEarly(t *testing.T) {
	bin, err := cluster.WaitAOFServer("")
	if err != nil {
		t.Skip(err)
	}
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 1, Server: bin, Persistence: cluster.PersistenceEverysec})
	early, took, err := cluster.WaitAOFEarly(ctxT(t), c.Nodes()[0])
	if err != nil {
		t.Fatal(err)
	}
	if !early && took < 100*time.Millisecond {
		t.Errorf("WAITAOF took %v and is not early: the window is wrong", took)
	}
	t.Logf("%s: WAITAOF acknowledged before the fsync: %t (took %v)", bin, early, took)
}
