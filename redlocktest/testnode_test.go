package redlocktest_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestPoolNode runs the conformance suite for *pool.Node, pipelined (the
// default) and with a pooled connection per call.
func TestPoolNode(t *testing.T) {
	for _, mode := range []struct {
		name   string
		pooled bool
	}{{"Pipelined", false}, {"Pooled", true}} {
		t.Run(mode.name, func(t *testing.T) {
			redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node {
				n := pool.New(pool.Config{Addr: addr, Pooled: mode.pooled})
				t.Cleanup(func() { n.Close() })
				return n
			})
		})
	}
}
