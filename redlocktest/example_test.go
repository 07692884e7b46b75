package redlocktest_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

// The test a Node implementation writes: one call, with a function that
// makes a Node for an address and closes it when the test ends.
func ExampleTestNode() {
	// In a _test.go file of the package that implements the Node:
	testMyNode := func(t *testing.T) {
		redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node {
			n := pool.New(pool.Config{Addr: addr}) // your Node for addr
			t.Cleanup(func() { n.Close() })
			return n
		})
	}
	_ = testMyNode // func TestMyNode(t *testing.T) { ... }
}
