package valkeygo_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/adapters/valkeygo"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/valkey-io/valkey-go"
)

// The conformance suite runs on Nodes made as the package documents it,
// with Open.
func TestConformance(t *testing.T) {
	redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node { return openNode(t, addr) })
}

// openNode returns a Node made by Open over one server; it closes at the
// end of t.
func openNode(t *testing.T, addr string) *valkeygo.Node {
	t.Helper()
	n, err := valkeygo.Open(valkey.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}
