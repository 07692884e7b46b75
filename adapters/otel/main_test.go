package otel_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withExampleMasters{m})
}

// exampleMasters are the real masters the Examples lock on: TestMain
// starts them before the tests and stops them afterwards.
var exampleMasters []*pool.Node

// exampleNodes returns the Examples' three masters, emptied first, so that
// every Example starts from fresh masters however often it runs. In a real
// program the nodes are pool.New nodes for your own masters, as in
// ExampleNewObserver.
func exampleNodes() []redlock.Node {
	nodes := make([]redlock.Node, len(exampleMasters))
	for i, n := range exampleMasters {
		if _, err := n.Do(context.Background(), "FLUSHALL"); err != nil {
			panic(fmt.Sprintf("otel examples: FLUSHALL on %s: %v", n.Addr(), err))
		}
		nodes[i] = n
	}
	return nodes
}

// withExampleMasters runs the tests with the Examples' masters up, and
// stops them before goleak looks for leftover goroutines.
type withExampleMasters struct{ m *testing.M }

func (w withExampleMasters) Run() int {
	var masters []*redlocktest.Master
	defer func() {
		for _, n := range exampleMasters {
			n.Close()
		}
		for _, m := range masters {
			m.Close()
		}
	}()
	for range 3 {
		m, err := redlocktest.StartMaster()
		if err != nil {
			fmt.Fprintln(os.Stderr, "otel examples need redis-server on PATH:", err)
			return 1
		}
		masters = append(masters, m)
		exampleMasters = append(exampleMasters, pool.New(pool.Config{Addr: m.Addr()}))
	}
	return w.m.Run()
}
