package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// Local is a cluster of redis-server (or valkey-server) processes on free
// loopback ports.
type Local struct {
	nodes    []Node
	procs    []*redisproc.Server
	password string
}

// StartLocal starts cfg.Nodes server processes (cfg.ServerBinary(),
// redis-server by default, must be on PATH) and waits until each answers
// PING.
func StartLocal(ctx context.Context, cfg Config) (*Local, error) {
	l := &Local{password: cfg.Password}
	for i := range cfg.nodes() {
		if err := ctx.Err(); err != nil {
			l.Close()
			return nil, err
		}
		s, err := redisproc.Start(redisproc.Options{Binary: cfg.ServerBinary(),
			AppendOnly: cfg.Persistence == PersistenceAOF, Password: cfg.Password, Args: append(cfg.Persistence.args(), cfg.Args...)})
		if err != nil {
			l.Close()
			return nil, fmt.Errorf("cluster: local node %d: %w", i, err)
		}
		l.procs = append(l.procs, s)
		setPassword(s.Addr(), cfg.Password)
		l.nodes = append(l.nodes, &localNode{name: nodeName(i), s: s, aof: cfg.Persistence == PersistenceAOF,
			everysec: cfg.Persistence == PersistenceEverysec})
	}
	return l, nil
}

// Backend returns BackendLocal.
func (l *Local) Backend() string { return BackendLocal }

// Nodes returns the nodes.
func (l *Local) Nodes() []Node { return l.nodes }

// Password returns the password the nodes require, "" for none.
func (l *Local) Password() string { return l.password }

// Close kills every process and removes its data directory.
func (l *Local) Close() error {
	var errs []error
	for _, s := range l.procs {
		errs = append(errs, s.Close())
		setPassword(s.Addr(), "")
	}
	return errors.Join(errs...)
}

// localNode is one redis-server process.
type localNode struct {
	name     string
	s        *redisproc.Server
	aof      bool // appendfsync always
	everysec bool // appendfsync everysec: a FsyncNode
}

func (n *localNode) Name() string                 { return n.name }
func (n *localNode) Addr() string                 { return n.s.Addr() }
func (n *localNode) Persistent() bool             { return n.aof }
func (n *localNode) Kill(context.Context) error   { return n.s.Kill() }
func (n *localNode) Pause(context.Context) error  { return n.s.Pause() }
func (n *localNode) Resume(context.Context) error { return n.s.Resume() }

// SetAOF implements Reconfigurable.
func (n *localNode) SetAOF(on bool) {
	n.s.SetAppendOnly(on)
	n.aof, n.everysec = on, false
}

// Start starts the process again; redisproc waits for PING itself.
func (n *localNode) Start(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return n.s.Start()
}

// nodeName is the name of the i-th node, the same on every backend (and the
// service names of docker-compose.yml).
func nodeName(i int) string { return fmt.Sprintf("redis-%d", i) }
