package inmem

import (
	"fmt"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Masters are n in-memory masters (miniredis) that run the library's real
// Lua scripts. Its methods are safe for concurrent use.
type Masters struct {
	servers []*miniredis.Miniredis
	nodes   []*pool.Node
}

// Start starts n in-memory masters on free loopback ports. Close them when
// done.
func Start(n int) (*Masters, error) {
	if n < 1 {
		return nil, fmt.Errorf("inmem: %d masters: want at least 1", n)
	}
	m := &Masters{}
	for range n {
		s := miniredis.NewMiniRedis()
		if err := s.Start(); err != nil {
			m.Close()
			return nil, fmt.Errorf("inmem: %w", err)
		}
		// Keys expire as real time passes, as on Redis, not only when a
		// test fast-forwards.
		s.ClockTTL(true)
		m.servers = append(m.servers, s)
		m.nodes = append(m.nodes, pool.New(pool.Config{Addr: s.Addr()}))
	}
	return m, nil
}

// New starts n masters for a test and closes them when t ends; it fails
// the test if they cannot start.
func New(t testing.TB, n int) *Masters {
	t.Helper()
	m, err := Start(n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// Nodes returns one redlock.Node per master, for redlock.New. Each is a
// *pool.Node, so it is also a redlock.Subscriber and a
// redlock.PreparedEvaler. The same Nodes are returned on every call; Close
// closes them.
func (m *Masters) Nodes() []redlock.Node {
	nodes := make([]redlock.Node, len(m.nodes))
	for i, n := range m.nodes {
		nodes[i] = n
	}
	return nodes
}

// Close closes the Nodes and stops the masters. It is idempotent.
func (m *Masters) Close() {
	for _, n := range m.nodes {
		n.Close()
	}
	for _, s := range m.servers {
		s.Close()
	}
}
