package redlocktest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// ErrNoRedisServer is the error of StartMaster when the server binary
// (redis-server, or the one $QUORUMLOCK_SERVER names) is not on PATH.
var ErrNoRedisServer = errors.New("redlocktest: server binary not on PATH")

// Master is a real redis-server process on a free port of 127.0.0.1,
// without persistence, for tests of code that talks to Redis (a Node
// implementation, a program that takes locks). Its methods are safe for
// concurrent use.
//
// The environment variable QUORUMLOCK_SERVER names another binary that
// takes redis-server's options, so that the same tests run against Valkey:
// QUORUMLOCK_SERVER=valkey-server go test ./...
type Master struct{ s *redisproc.Server }

// StartMaster starts a master with args as extra "--name value" arguments
// and waits until it answers PING. Close stops it. It is for TestMain and
// Examples, which have no testing.TB; tests use NewMaster.
func StartMaster(args ...string) (*Master, error) {
	if _, err := exec.LookPath(redisproc.DefaultBinary()); err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNoRedisServer, redisproc.DefaultBinary())
	}
	s, err := redisproc.Start(redisproc.Options{Args: args})
	if err != nil {
		return nil, fmt.Errorf("redlocktest: %w", err)
	}
	return &Master{s: s}, nil
}

// NewMaster starts a master for tb and stops it when tb ends. It skips tb
// when the server binary is not on PATH and fails it when the master does
// not start.
func NewMaster(tb testing.TB, args ...string) *Master {
	tb.Helper()
	m, err := StartMaster(args...)
	if errors.Is(err, ErrNoRedisServer) {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { m.Close() })
	return m
}

// NewClusterMaster starts a one-node Redis Cluster that holds every hash
// slot, for tb, and returns it once the cluster state is ok: one master
// that is a whole cluster, as a Node over a cluster client sees it.
func NewClusterMaster(tb testing.TB) *Master {
	tb.Helper()
	m := NewMaster(tb, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(tb.TempDir(), "nodes.conf"))
	c, err := redis.Dial("tcp", m.Addr(), redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(2*time.Second))
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("CLUSTER", "ADDSLOTSRANGE", 0, 16383); err != nil {
		tb.Fatalf("redlocktest: CLUSTER ADDSLOTSRANGE: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		info, err := redis.String(c.Do("CLUSTER", "INFO"))
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return m
		}
		select {
		case <-ctx.Done():
			tb.Fatalf("redlocktest: cluster state never ok: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Addr returns the master's "127.0.0.1:port".
func (m *Master) Addr() string { return m.s.Addr() }

// Pause freezes the process (SIGSTOP): it keeps its connections and
// answers nothing, as a frozen or partitioned master.
func (m *Master) Pause() error { return m.s.Pause() }

// Resume ends a Pause (SIGCONT).
func (m *Master) Resume() error { return m.s.Resume() }

// Restart kills the process and starts it again on the same port, empty
// (no persistence), after delay.
func (m *Master) Restart(delay time.Duration) error { return m.s.Restart(delay) }

// Close stops the process and removes its files.
func (m *Master) Close() error { return m.s.Close() }
