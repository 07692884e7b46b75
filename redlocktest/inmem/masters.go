package inmem

import (
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Masters are n in-memory masters (miniredis) that run the library's real
// Lua scripts. Its methods are safe for concurrent use.
type Masters struct {
	servers []*miniredis.Miniredis
	nodes   []*node
}

// node is a master's *pool.Node, which gives the master's identity itself:
// miniredis answers no INFO server. An in-memory master never restarts
// while its Masters live, and so never forgets a grant: its identity is
// one process that persists every write, for the restart guard, which then
// holds nothing back.
type node struct {
	*pool.Node
	id redlock.Identity
}

// Abilities are the pool.Node's, with the master's identity.
func (n *node) Abilities() redlock.Abilities {
	a := n.Node.Abilities()
	a.Identity = func() (redlock.Identity, error) { return n.id, nil }
	return a
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
		m.nodes = append(m.nodes, &node{Node: pool.New(pool.Config{Addr: s.Addr()}), id: redlock.Identity{
			RunID: rand.Text(), Started: time.Now(), AppendOnly: true, AppendFsync: "always",
		}})
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

// Nodes returns one redlock.Node per master, for redlock.New: a
// *pool.Node's abilities (redlock.Capable), with the master's identity
// given by the Masters (an in-memory master that never restarts, and so
// persists every write: the restart guard holds nothing back). The same
// Nodes are returned on every call; Close closes them.
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
