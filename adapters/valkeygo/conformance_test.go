package valkeygo_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/valkey-io/valkey-go"
)

// The conformance suite runs on Nodes made as the package documents it,
// with Open, against redis-server, or valkey-server with
// QUORUMLOCK_SERVER=valkey-server.
func TestConformance(t *testing.T) {
	redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node {
		return opened(t, valkey.ClientOption{InitAddress: []string{addr}, ForceSingleClient: true, DisableCache: true})
	})
}
