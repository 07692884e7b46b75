package pool_test

import (
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// *pool.Node is a redlock.Node with every optional ability. The checks
// live in a test file so that package pool itself does not import redlock
// (the core's dependencies run redlock -> quorum, clock; pool -> redigo).
var (
	_ redlock.Node           = (*pool.Node)(nil)
	_ redlock.Subscriber     = (*pool.Node)(nil)
	_ redlock.PreparedEvaler = (*pool.Node)(nil)
	_ redlock.AsyncNode      = (*pool.Node)(nil)
)
