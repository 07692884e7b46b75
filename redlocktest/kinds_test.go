package redlocktest

import (
	"os/exec"
	"testing"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest/internal/nodetest"
)

// TestLockKinds runs, against three real redis-server masters, the lock
// tests that redlocktest/inmem runs against its in-memory masters, so that
// the two stay the same tests.
func TestLockKinds(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not on PATH")
	}
	servers := redistest.Start(t, 3, redisproc.Options{})
	nodes := make([]redlock.Node, len(servers))
	for i, s := range servers {
		n := pool.New(pool.Config{Addr: s.Addr()})
		t.Cleanup(func() { n.Close() })
		nodes[i] = n
	}
	nodetest.RunLockKinds(t, func(*testing.T) []redlock.Node { return nodes })
}
