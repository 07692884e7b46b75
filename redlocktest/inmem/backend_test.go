package inmem

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/quorumlock/quorumlock/redlocktest/internal/nodetest"
)

// backend runs the conformance checks against in-memory masters.
var backend = nodetest.Backend{Name: "miniredis", Start: startMiniredis}

func startMiniredis(t *testing.T, n int) []nodetest.Master {
	t.Helper()
	m := New(t, n)
	masters := make([]nodetest.Master, n)
	for i, s := range m.servers {
		masters[i] = server{s}
	}
	return masters
}

// server is a miniredis server as a nodetest.Master.
type server struct{ s *miniredis.Miniredis }

func (s server) Addr() string { return s.s.Addr() }

// Freeze holds miniredis's own lock, which every command takes: the server
// accepts connections and reads commands, but answers nothing, as a
// SIGSTOPped redis-server.
func (s server) Freeze() (func(), error) {
	s.s.Lock()
	return s.s.Unlock, nil
}

// Restart closes the server, and every connection to it, and starts it
// again on the same port. Unlike a redis-server without persistence,
// miniredis keeps its data.
func (s server) Restart() error {
	s.s.Close()
	return s.s.Restart()
}
