package rueidis_test

import (
	"testing"

	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/redis/rueidis"
)

// The conformance suite runs on Nodes made as the package documents it,
// with Open; the other tests use New over a client of their own.
func TestConformance(t *testing.T) {
	redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node { return openNode(t, addr) })
}

// openNode returns a Node made by Open with the options the tests use; it
// closes at the end of t.
func openNode(t *testing.T, addrs ...string) *rueidisnode.Node {
	t.Helper()
	opt := rueidis.ClientOption{InitAddress: addrs, DisableCache: true}
	opt.ForceSingleClient = len(addrs) == 1
	n, err := rueidisnode.Open(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}
