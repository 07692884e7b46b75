package pool_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

var _ redlock.Capable = (*pool.Node)(nil)

// A *pool.Node has every ability in the pipelined mode, and every one but
// EvalAsync (a goroutine per call either way) with Config.Pooled.
func TestAbilities(t *testing.T) {
	for _, pooled := range []bool{false, true} {
		n := pool.New(pool.Config{Addr: "127.0.0.1:1", Pooled: pooled})
		a := n.Abilities()
		if a.EvalPrepared == nil || a.Subscribe == nil || a.Identity == nil || a.Confirm == nil || (a.EvalAsync == nil) != pooled {
			t.Errorf("pooled %v: abilities %+v", pooled, a)
		}
		n.Close()
	}
}
