// Package redistest starts real redis-server processes for tests and stops
// them when the test ends.
package redistest

import (
	"testing"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// Start starts n redis-server processes with opts on free loopback ports and
// registers their removal with t.Cleanup. It fails the test if any does not
// come up.
func Start(tb testing.TB, n int, opts redisproc.Options) []*redisproc.Server {
	tb.Helper()
	servers := make([]*redisproc.Server, n)
	for i := range servers {
		s, err := redisproc.Start(opts)
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { s.Close() })
		servers[i] = s
	}
	return servers
}

// Addrs returns the servers' addresses.
func Addrs(servers []*redisproc.Server) []string {
	addrs := make([]string, len(servers))
	for i, s := range servers {
		addrs[i] = s.Addr()
	}
	return addrs
}
