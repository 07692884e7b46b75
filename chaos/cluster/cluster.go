package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Node is one Redis master whose process (or container) the harness controls.
// Its methods are safe for concurrent use.
type Node interface {
	// Name identifies the node in reports, e.g. "redis-2".
	Name() string
	// Addr is the "host:port" the harness reaches the node on. It does not
	// change across restarts.
	Addr() string
	// Persistent reports whether the node runs with AOF and appendfsync
	// always, so that a restart keeps every acknowledged write.
	Persistent() bool
	// Kill ends the node at once (SIGKILL, docker kill) and returns when it is
	// gone. Whatever was not persisted is lost. Killing a node that is down
	// is a no-op.
	Kill(ctx context.Context) error
	// Start starts a killed node again on the same address and returns when
	// it answers PING. Starting a running node is a no-op.
	Start(ctx context.Context) error
	// Pause freezes the node (SIGSTOP, docker pause): connections are still
	// accepted but nothing is answered.
	Pause(ctx context.Context) error
	// Resume undoes Pause.
	Resume(ctx context.Context) error
}

// Reconfigurable is a Node whose persistence can be changed for its next
// Start, as an operator changes a master's configuration before a restart
// (the local backend's nodes).
type Reconfigurable interface {
	// SetAOF makes the node's next Start run with AOF and appendfsync
	// always (on), or without AOF.
	SetAOF(on bool)
}

// Cluster is a set of independent masters (no replication between them).
type Cluster interface {
	// Backend names the backend: "local", "docker" or "compose".
	Backend() string
	// Nodes returns the nodes, in a fixed order.
	Nodes() []Node
	// Password is the password every node requires from its clients
	// (requirepass; clients send AUTH when they connect), "" for none.
	Password() string
	// Close releases the cluster: processes and containers that it started
	// are removed; nodes it only drives (compose) are resumed and started
	// again, as they were found.
	Close() error
}

// Config describes the cluster to start.
type Config struct {
	// Nodes is the number of masters; 0 means 5.
	Nodes int
	// Persistence is what a restarted node keeps.
	Persistence Persistence
	// Server is the server binary of the local backend's nodes: a name on
	// PATH or a path, redis-server or a compatible server (valkey-server).
	// "" means $QUORUMLOCK_SERVER, else redis-server. The Docker and
	// Compose backends run their image's server.
	Server string
	// Args are extra server options of the local backend's nodes (e.g.
	// "--timeout", "1").
	Args []string
	// Password, if set, starts every node with requirepass, so that
	// clients must dial with AUTH (Cluster.Password reads it back). The
	// harness's own commands on the nodes (Keys, Get, ClockJump, ...)
	// authenticate by themselves. The local and Docker backends support
	// it; Compose, whose nodes are started beforehand, does not.
	Password string
}

// Persistence says whether nodes persist their writes.
type Persistence int

const (
	// PersistenceAny takes what the backend has: no persistence on the
	// backends that start their nodes, the project's setting on Compose.
	PersistenceAny Persistence = iota
	// PersistenceNone runs without AOF (and without RDB snapshots): a
	// restarted node comes back empty.
	PersistenceNone
	// PersistenceAOF runs with AOF and appendfsync always: a restarted node
	// comes back with every acknowledged write.
	PersistenceAOF
	// PersistenceEverysec runs with AOF and appendfsync everysec, the
	// common production setting: a killed process keeps what it wrote to
	// its AOF, but a crash of the machine loses what was not fsynced yet,
	// up to a second of writes (PowerLoss emulates it). The local backend
	// only.
	PersistenceEverysec
)

// String returns "any", "none", "aof" or "everysec".
func (p Persistence) String() string {
	switch p {
	case PersistenceNone:
		return "none"
	case PersistenceAOF:
		return "aof"
	case PersistenceEverysec:
		return "everysec"
	default:
		return "any"
	}
}

// ServerEnv names the environment variable that chooses the server binary
// of the local backend (Config.Server) when the config does not.
const ServerEnv = "QUORUMLOCK_SERVER"

// DefaultServer is the server binary of the local backend when neither
// Config.Server nor ServerEnv names one.
const DefaultServer = "redis-server"

// ServerBinary returns the server binary the local backend starts for c:
// c.Server, else $QUORUMLOCK_SERVER, else redis-server.
func (c Config) ServerBinary() string {
	if c.Server != "" {
		return c.Server
	}
	return envOr(ServerEnv, DefaultServer)
}

// args are the server options of p beyond redisproc's: AOF with
// appendfsync everysec for PersistenceEverysec (they override redisproc's
// "--appendonly no").
func (p Persistence) args() []string {
	if p == PersistenceEverysec {
		return []string{"--appendonly", "yes", "--appendfsync", "everysec"}
	}
	return nil
}

// dockerSupports returns ErrUnsupported for a persistence that only the
// local backend provides.
func dockerSupports(p Persistence) error {
	if p == PersistenceEverysec {
		return fmt.Errorf("%w: persistence %s needs the local backend (a power loss cuts the AOF back in the node's data directory)", ErrUnsupported, p)
	}
	return nil
}

func (c Config) nodes() int {
	if c.Nodes <= 0 {
		return 5
	}
	return c.Nodes
}

var (
	_ Cluster = (*Local)(nil)
	_ Cluster = (*Docker)(nil)
	_ Cluster = (*Compose)(nil)
	_ Node    = (*localNode)(nil)
	_ Node    = (*containerNode)(nil)
)

// Backend names.
const (
	BackendLocal   = "local"
	BackendDocker  = "docker"
	BackendCompose = "compose"
)

// ErrUnsupported is returned when a backend cannot provide the cluster asked
// for, e.g. a compose project started without AOF when AOF is required.
var ErrUnsupported = errors.New("cluster: unsupported by this backend")

// Restart kills n, waits delay (0 for none) and starts it again. Without
// persistence the node comes back empty. ctx bounds the whole restart; if it
// ends during the delay the node stays down.
func Restart(ctx context.Context, n Node, delay time.Duration) error {
	if err := n.Kill(ctx); err != nil {
		return err
	}
	if err := sleep(ctx, delay); err != nil {
		return fmt.Errorf("cluster: restart %s: %w", n.Name(), err)
	}
	return n.Start(ctx)
}

// Start starts a cluster on the named backend: BackendLocal,
// BackendDocker (image from DockerConfig rules) or BackendCompose (the
// masters of docker-compose.yml on their fixed ports).
func Start(ctx context.Context, backend string, cfg Config) (Cluster, error) {
	switch backend {
	case "", BackendLocal:
		return StartLocal(ctx, cfg)
	case BackendDocker:
		return StartDocker(ctx, DockerConfig{Config: cfg})
	case BackendCompose:
		return OpenCompose(ctx, ComposeConfig{Config: cfg})
	default:
		return nil, fmt.Errorf("cluster: unknown backend %q (want %s, %s or %s)",
			backend, BackendLocal, BackendDocker, BackendCompose)
	}
}

// Addrs returns the addresses of the nodes of c.
func Addrs(c Cluster) []string {
	nodes := c.Nodes()
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// envOr returns the environment variable name, or def when it is unset or
// empty.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
