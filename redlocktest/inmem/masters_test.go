package inmem

import (
	"testing"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest/internal/nodetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLockKinds runs the lock tests that redlocktest runs against real
// redis-server masters: plain, expiry, fenced, reentrant, read-write, and
// wake on release for each.
func TestLockKinds(t *testing.T) {
	m := New(t, 3)
	nodetest.RunLockKinds(t, func(*testing.T) []redlock.Node { return m.Nodes() })
}

// TestNodeConformance runs the redlocktest.TestNode checks against
// *pool.Node over the in-memory masters; what miniredis cannot do is
// skipped with the reason (see backend.go).
func TestNodeConformance(t *testing.T) {
	for _, mode := range []struct {
		name   string
		pooled bool
	}{{"Pipelined", false}, {"Pooled", true}} {
		t.Run(mode.name, func(t *testing.T) {
			nodetest.Run(t, backend, func(t *testing.T, addr string) redlock.Node {
				n := pool.New(pool.Config{Addr: addr, Pooled: mode.pooled})
				t.Cleanup(func() { n.Close() })
				return n
			})
		})
	}
}

func TestStartRefusesNoMasters(t *testing.T) {
	if m, err := Start(0); err == nil {
		m.Close()
		t.Fatal("Start(0) succeeded")
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	m, err := Start(1)
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	m.Close()
}
