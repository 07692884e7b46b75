package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/ory/dockertest/v3"
)

// Defaults of the repository's docker-compose.yml: containers
// quorumlock-redis-0 ... quorumlock-redis-4 on 127.0.0.1:7000 ... 7004.
const (
	ComposeContainerPrefix = "quorumlock-"
	ComposeBasePort        = 7000
	ComposeNodes           = 5
)

// ComposeConfig locates the masters of a compose project.
type ComposeConfig struct {
	Config
	// ContainerPrefix precedes the node names ("redis-0", ...) in the
	// container names; "" means ComposeContainerPrefix.
	ContainerPrefix string
	// BasePort is the host port of node 0, node i is on BasePort+i; 0 means
	// ComposeBasePort.
	BasePort int
	// Endpoint is the Docker engine; "" means DOCKER_HOST or the default
	// socket.
	Endpoint string
}

// Compose drives the masters of an already running compose project. It
// starts and removes nothing: Close leaves every node running and unpaused.
type Compose struct {
	nodes []Node
}

// OpenCompose finds the project's containers, checks that each answers PING
// and that its persistence matches cfg.Persistence (the project's nodes all
// run with the same command line; see docker-compose.yml). Keys left by
// earlier runs do not matter: every run uses keys of its own.
func OpenCompose(ctx context.Context, cfg ComposeConfig) (*Compose, error) {
	if err := dockerSupports(cfg.Persistence); err != nil {
		return nil, err
	}
	if cfg.ContainerPrefix == "" {
		cfg.ContainerPrefix = ComposeContainerPrefix
	}
	if cfg.BasePort == 0 {
		cfg.BasePort = ComposeBasePort
	}
	if cfg.Password != "" {
		return nil, fmt.Errorf("%w: the masters of docker-compose.yml run without a password", ErrUnsupported)
	}
	n := cfg.nodes()
	if n > ComposeNodes {
		return nil, fmt.Errorf("%w: docker-compose.yml has %d masters, %d asked for", ErrUnsupported, ComposeNodes, n)
	}
	p, err := dockertest.NewPool(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("cluster: compose: %w", err)
	}
	c := &Compose{}
	for i := range n {
		name := cfg.ContainerPrefix + nodeName(i)
		r, ok := p.ContainerByName("^/?" + name + "$")
		if !ok {
			return nil, fmt.Errorf("cluster: compose: no container %s (start the masters with: docker compose up -d)", name)
		}
		node := &containerNode{
			name:   nodeName(i),
			addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.BasePort+i)),
			id:     r.Container.ID,
			client: p.Client,
		}
		if err := node.restore(ctx); err != nil {
			return nil, err
		}
		if node.aof, err = appendOnly(ctx, node.addr); err != nil {
			return nil, err
		}
		want := cfg.Persistence
		if (want == PersistenceAOF && !node.aof) || (want == PersistenceNone && node.aof) {
			return nil, fmt.Errorf("%w: needs persistence %s but %s runs with appendonly=%t "+
				"(restart the project with QUORUMLOCK_APPENDONLY=%s docker compose up -d)",
				ErrUnsupported, want, name, node.aof, map[bool]string{true: "yes", false: "no"}[want == PersistenceAOF])
		}
		c.nodes = append(c.nodes, node)
	}
	return c, nil
}

// Backend returns BackendCompose.
func (c *Compose) Backend() string { return BackendCompose }

// Nodes returns the nodes.
func (c *Compose) Nodes() []Node { return c.nodes }

// Password returns "": the project's masters require none.
func (c *Compose) Password() string { return "" }

// Close resumes paused nodes and starts killed ones, so that the project is
// left as it was found.
func (c *Compose) Close() error {
	var errs []error
	for _, n := range c.nodes {
		errs = append(errs, n.(*containerNode).restore(context.Background()))
	}
	return errors.Join(errs...)
}

// restore brings the node back to running and unpaused, whatever state a
// fault left it in.
func (n *containerNode) restore(ctx context.Context) error {
	st, err := n.state(ctx)
	if err != nil {
		return err
	}
	if st.Paused {
		if err := n.Resume(ctx); err != nil {
			return err
		}
	}
	return n.Start(ctx)
}
