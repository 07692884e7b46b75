package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"

	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// ImageEnv is the environment variable that names the Redis image of the
// Docker backend when DockerConfig.Image is empty.
const ImageEnv = "QUORUMLOCK_REDIS_IMAGE"

// DefaultImage is the image of the Docker backend when neither
// DockerConfig.Image nor ImageEnv names one.
const DefaultImage = "redis:7"

// DockerConfig describes a cluster of containers.
type DockerConfig struct {
	Config
	// Image is the Redis image ("repository:tag"); "" means the value of
	// ImageEnv, or DefaultImage. It must run "redis-server ARGS..." given
	// as its command, as the official image does.
	Image string
	// Endpoint is the Docker engine; "" means DOCKER_HOST or the default
	// socket.
	Endpoint string
}

// image returns the image the Docker backend uses for cfg.
func (cfg DockerConfig) image() string {
	if cfg.Image != "" {
		return cfg.Image
	}
	return envOr(ImageEnv, DefaultImage)
}

// DockerAvailable reports whether a Docker engine answers at endpoint ("" for
// DOCKER_HOST or the default socket), and why not.
func DockerAvailable(endpoint string) error {
	p, err := dockertest.NewPool(endpoint)
	if err != nil {
		return fmt.Errorf("cluster: docker: %w", err)
	}
	if err := p.Client.Ping(); err != nil {
		return fmt.Errorf("cluster: docker: %w", err)
	}
	return nil
}

// Docker is a cluster of Redis containers started through dockertest, each
// publishing its port on a fixed port of 127.0.0.1 (fixed so that it stays
// the same across restarts).
type Docker struct {
	pool      *dockertest.Pool
	resources []*dockertest.Resource
	nodes     []Node
	password  string
}

// StartDocker starts cfg.Nodes containers of the configured image and waits
// until each answers PING. The image must be present or pullable.
func StartDocker(ctx context.Context, cfg DockerConfig) (*Docker, error) {
	if err := dockerSupports(cfg.Persistence); err != nil {
		return nil, err
	}
	p, err := dockertest.NewPool(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("cluster: docker: %w", err)
	}
	if err := p.Client.Ping(); err != nil {
		return nil, fmt.Errorf("cluster: docker: %w", err)
	}
	repo, tag := splitImage(cfg.image())
	if _, err := p.Client.InspectImage(repo + ":" + tag); err != nil {
		if err := p.Client.PullImage(dc.PullImageOptions{Repository: repo, Tag: tag, Context: ctx}, dc.AuthConfiguration{}); err != nil {
			return nil, fmt.Errorf("cluster: docker: image %s:%s is not present and cannot be pulled (%v); "+
				"build one from the host's redis-server with chaos/redisimage/build-image.sh and set %s", repo, tag, err, ImageEnv)
		}
	}
	d := &Docker{pool: p, password: cfg.Password}
	for i := range cfg.nodes() {
		if err := d.startNode(ctx, i, repo, tag, cfg.Persistence == PersistenceAOF); err != nil {
			d.Close()
			return nil, err
		}
	}
	return d, nil
}

// portAttempts is how many free ports startNode tries for one container.
// The port is picked free (redisproc.FreePort), but it is fixed for the
// container's life, so the engine binds it only when the container starts:
// another process may take it in between ("address already in use").
const portAttempts = 5

// containers numbers the containers this process creates, for their names.
var containers atomic.Int64

// freePort picks a node's port; tests replace it.
var freePort = redisproc.FreePort

func (d *Docker) startNode(ctx context.Context, i int, repo, tag string, aof bool) error {
	var (
		r    *dockertest.Resource
		port int
		err  error
	)
	for range portAttempts {
		if r, port, err = d.runNode(i, repo, tag, aof); err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		return err
	}
	d.resources = append(d.resources, r)
	n := &containerNode{
		name:   nodeName(i),
		addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		id:     r.Container.ID,
		client: d.pool.Client,
		aof:    aof,
	}
	d.nodes = append(d.nodes, n)
	setPassword(n.addr, d.password)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return awaitPing(wctx, n.addr)
}

// runNode creates and starts node i's container, published on a free port
// of 127.0.0.1; a container that was created but did not start is removed.
func (d *Docker) runNode(i int, repo, tag string, aof bool) (*dockertest.Resource, int, error) {
	port, err := freePort()
	if err != nil {
		return nil, 0, fmt.Errorf("cluster: docker: %w", err)
	}
	args := []string{"redis-server", "--port", "6379", "--save", "", "--protected-mode", "no", "--loglevel", "warning"}
	if aof {
		args = append(args, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		args = append(args, "--appendonly", "no")
	}
	if d.password != "" {
		args = append(args, "--requirepass", d.password)
	}
	name := fmt.Sprintf("quorumlock-chaos-%d-%d-%s", os.Getpid(), containers.Add(1), nodeName(i))
	r, err := d.pool.RunWithOptions(&dockertest.RunOptions{
		Name:         name,
		Repository:   repo,
		Tag:          tag,
		Cmd:          args,
		ExposedPorts: []string{"6379/tcp"},
		PortBindings: map[dc.Port][]dc.PortBinding{
			"6379/tcp": {{HostIP: "127.0.0.1", HostPort: strconv.Itoa(port)}},
		},
		Labels: map[string]string{"org.quorumlock.chaos": nodeName(i)},
	}, func(hc *dc.HostConfig) {
		hc.AutoRemove = false
		hc.RestartPolicy = dc.RestartPolicy{Name: "no"}
	})
	if err != nil {
		// dockertest leaves a container that was created but did not start.
		_ = d.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: name, Force: true, RemoveVolumes: true})
		return nil, 0, fmt.Errorf("cluster: docker: node %d: %w", i, err)
	}
	return r, port, nil
}

// Backend returns BackendDocker.
func (d *Docker) Backend() string { return BackendDocker }

// Nodes returns the nodes.
func (d *Docker) Nodes() []Node { return d.nodes }

// Password returns the password the nodes require, "" for none.
func (d *Docker) Password() string { return d.password }

// Close removes every container with its volumes.
func (d *Docker) Close() error {
	for _, n := range d.nodes {
		setPassword(n.Addr(), "")
	}
	var errs []error
	for _, r := range d.resources {
		if err := d.pool.Purge(r); err != nil {
			errs = append(errs, fmt.Errorf("cluster: docker: remove %s: %w", r.Container.ID[:12], err))
		}
	}
	return errors.Join(errs...)
}

// splitImage splits "repo:tag" (the repository may hold a registry port,
// "host:5000/redis:7"); a missing tag is "latest".
func splitImage(image string) (repo, tag string) {
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return image, "latest"
	}
	return image[:i], image[i+1:]
}

// containerNode is one Redis container, driven through the Docker API. Both
// the Docker and the Compose backends use it.
type containerNode struct {
	name   string
	addr   string
	id     string
	client *dc.Client
	aof    bool
}

func (n *containerNode) Name() string     { return n.name }
func (n *containerNode) Addr() string     { return n.addr }
func (n *containerNode) Persistent() bool { return n.aof }

func (n *containerNode) state(ctx context.Context) (dc.State, error) {
	c, err := n.client.InspectContainerWithContext(n.id, ctx)
	if err != nil {
		return dc.State{}, fmt.Errorf("cluster: inspect %s: %w", n.name, err)
	}
	return c.State, nil
}

// Kill sends SIGKILL to the container and waits until it has stopped. A
// paused container is killed as it is (the engine's freezer thaws it only to
// deliver the signal), so that it runs nothing more.
func (n *containerNode) Kill(ctx context.Context) error {
	st, err := n.state(ctx)
	if err != nil {
		return err
	}
	if !st.Running {
		return nil
	}
	err = n.client.KillContainer(dc.KillContainerOptions{ID: n.id, Signal: dc.SIGKILL, Context: ctx})
	if err != nil && st.Paused {
		// Engines that refuse to kill a paused container: thaw it first.
		if uerr := n.client.UnpauseContainer(n.id); uerr == nil {
			err = n.client.KillContainer(dc.KillContainerOptions{ID: n.id, Signal: dc.SIGKILL, Context: ctx})
		}
	}
	if err != nil {
		return fmt.Errorf("cluster: kill %s: %w", n.name, err)
	}
	if _, err := n.client.WaitContainerWithContext(n.id, ctx); err != nil {
		return fmt.Errorf("cluster: kill %s: wait: %w", n.name, err)
	}
	return nil
}

// Start starts a stopped container (an unpaused running one is left alone)
// and waits until it answers PING.
func (n *containerNode) Start(ctx context.Context) error {
	st, err := n.state(ctx)
	if err != nil {
		return err
	}
	if !st.Running {
		err := n.client.StartContainerWithContext(n.id, nil, ctx)
		var already *dc.ContainerAlreadyRunning
		if err != nil && !errors.As(err, &already) {
			return fmt.Errorf("cluster: start %s: %w", n.name, err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return awaitPing(wctx, n.addr)
}

// Pause freezes the container (docker pause, the cgroup freezer).
func (n *containerNode) Pause(context.Context) error {
	if err := n.client.PauseContainer(n.id); err != nil {
		return fmt.Errorf("cluster: pause %s: %w", n.name, err)
	}
	return nil
}

// Resume thaws the container.
func (n *containerNode) Resume(context.Context) error {
	if err := n.client.UnpauseContainer(n.id); err != nil {
		return fmt.Errorf("cluster: resume %s: %w", n.name, err)
	}
	return nil
}
