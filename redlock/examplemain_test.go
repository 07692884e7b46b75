package redlock_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// exampleMasters are the real masters the Examples lock on: TestMain starts
// them before the tests and stops them afterwards.
var exampleMasters []*pool.Node

// exampleNodes returns the Examples' three masters, emptied first, so that
// every Example starts from fresh masters (its fencing tokens from 1) however
// often it runs. In a real program the nodes are pool.New nodes for your own
// masters, as in ExampleNew.
func exampleNodes() []redlock.Node {
	nodes := make([]redlock.Node, len(exampleMasters))
	for i, n := range exampleMasters {
		if _, err := n.Do(context.Background(), "FLUSHALL"); err != nil {
			panic(fmt.Sprintf("redlock examples: FLUSHALL on %s: %v", n.Addr(), err))
		}
		nodes[i] = n
	}
	return nodes
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(withExampleMasters{m})
}

// withExampleMasters runs the tests with the Examples' masters up, and stops
// them before goleak looks for leftover goroutines.
type withExampleMasters struct{ m *testing.M }

func (w withExampleMasters) Run() int {
	stop, err := startExampleMasters(3)
	if err != nil {
		fmt.Fprintln(os.Stderr, "redlock tests need redis-server on PATH:", err)
		return 1
	}
	defer stop()
	return w.m.Run()
}

// startExampleMasters starts n redis-server processes, fills exampleMasters
// with a pool.Node for each, and returns a function that closes the nodes and
// stops the processes.
func startExampleMasters(n int) (stop func(), err error) {
	var servers []*redisproc.Server
	stop = func() {
		for _, node := range exampleMasters {
			node.Close()
		}
		exampleMasters = nil
		for _, s := range servers {
			s.Close()
		}
	}
	for range n {
		s, err := redisproc.Start(redisproc.Options{})
		if err != nil {
			stop()
			return nil, err
		}
		servers = append(servers, s)
		exampleMasters = append(exampleMasters, pool.New(pool.Config{Addr: s.Addr()}))
	}
	return stop, nil
}
