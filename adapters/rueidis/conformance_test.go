package rueidis_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

// The conformance suite runs on Nodes made as the package documents it,
// with Open; the other tests use New over a client of their own.
func TestConformance(t *testing.T) {
	redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node { return openNode(t, addr) })
}
