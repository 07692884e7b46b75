// Package chaostest holds the test helpers of the chaos module: which
// cluster backends a test can use on this machine, and starting a cluster
// that is removed when the test ends.
package chaostest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/redisimage"
)

// Backends returns the backends a test should run on: always
// cluster.BackendLocal, and cluster.BackendDocker when a Docker engine is
// reachable (unless QUORUMLOCK_CHAOS_DOCKER=0).
func Backends(tb testing.TB) []string {
	tb.Helper()
	b := []string{cluster.BackendLocal}
	if dockerImage(tb) != "" {
		b = append(b, cluster.BackendDocker)
	}
	return b
}

var docker struct {
	sync.Once
	image  string
	reason string
}

// dockerImage returns the image Docker clusters of the tests use, or "" when
// Docker is not usable here (and logs why). The image is the one named by
// cluster.ImageEnv, or else one built from the host's redis-server.
func dockerImage(tb testing.TB) string {
	tb.Helper()
	docker.Do(func() {
		if os.Getenv("QUORUMLOCK_CHAOS_DOCKER") == "0" {
			docker.reason = "QUORUMLOCK_CHAOS_DOCKER=0"
			return
		}
		if err := cluster.DockerAvailable(""); err != nil {
			docker.reason = err.Error()
			return
		}
		if img := os.Getenv(cluster.ImageEnv); img != "" {
			docker.image = img
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		img, err := redisimage.BuildOnce(ctx)
		if err != nil {
			docker.reason = err.Error()
			return
		}
		docker.image = img
	})
	if docker.image == "" {
		tb.Logf("docker backend skipped: %s", docker.reason)
	}
	return docker.image
}

// Opener returns a function that starts clusters on backend, as
// scenario.Options and the chaos command take it.
func Opener(tb testing.TB, backend string) func(ctx context.Context, cfg cluster.Config) (cluster.Cluster, error) {
	tb.Helper()
	if backend != cluster.BackendDocker {
		return func(ctx context.Context, cfg cluster.Config) (cluster.Cluster, error) {
			return cluster.Start(ctx, backend, cfg)
		}
	}
	img := dockerImage(tb)
	if img == "" {
		tb.Skip("docker is not usable here")
	}
	return func(ctx context.Context, cfg cluster.Config) (cluster.Cluster, error) {
		return cluster.StartDocker(ctx, cluster.DockerConfig{Config: cfg, Image: img})
	}
}

// Start starts a cluster on backend and removes it when the test ends.
func Start(tb testing.TB, backend string, cfg cluster.Config) cluster.Cluster {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Opener(tb, backend)(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := c.Close(); err != nil {
			tb.Error(err)
		}
	})
	return c
}

// ComposeUp starts the masters of the repository's docker-compose.yml (with
// the test image, without persistence) as project quorumlock-chaos-test and
// takes them down when the test ends. It skips the test when Docker, docker
// compose or the fixed ports are not available, or when containers of that
// name already run (someone's own project, left alone).
func ComposeUp(tb testing.TB, file string) {
	tb.Helper()
	img := dockerImage(tb)
	if img == "" {
		tb.Skip("docker is not usable here")
	}
	compose := composeCommand()
	if compose == nil {
		tb.Skip("neither docker compose nor docker-compose is installed")
	}
	for i := range cluster.ComposeNodes {
		addr := fmt.Sprintf("127.0.0.1:%d", cluster.ComposeBasePort+i)
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			tb.Skipf("%s is in use: the compose project (or something else) already runs", addr)
		}
	}
	run := func(args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		all := append(append(slices.Clone(compose[1:]), "-f", file, "-p", "quorumlock-chaos-test"), args...)
		cmd := exec.CommandContext(ctx, compose[0], all...)
		cmd.Env = append(os.Environ(), cluster.ImageEnv+"="+img, "QUORUMLOCK_APPENDONLY=no")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s %v: %w\n%s", compose[0], all, err, out)
		}
		return nil
	}
	tb.Cleanup(func() {
		if err := run("down", "--timeout", "1"); err != nil {
			tb.Error(err)
		}
	})
	if err := run("up", "-d"); err != nil {
		tb.Fatal(err)
	}
}

// composeCommand returns the compose command line: the docker plugin if
// present, else docker-compose, else nil.
func composeCommand() []string {
	if exec.Command("docker", "compose", "version").Run() == nil {
		return []string{"docker", "compose"}
	}
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	return nil
}

// AwaitValue polls get every 5ms until it returns want, for up to 10s,
// and returns the values it returned on the way, in order, each run of
// equal values once (want last). It fails the test if want never comes.
func AwaitValue(tb testing.TB, want string, get func() string) []string {
	tb.Helper()
	var seen []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		v := get()
		if len(seen) == 0 || seen[len(seen)-1] != v {
			seen = append(seen, v)
		}
		if v == want {
			return seen
		}
	}
	tb.Fatalf("never got %q (saw %v)", want, seen)
	return nil
}

// DockerScenariosEnv names the scenarios that TestScenarios runs on the
// Docker backend, comma-separated; unset or empty, all of them. CI sets a
// few: the backend's own tests are in package cluster, and every scenario
// runs on the local backend.
const DockerScenariosEnv = "QUORUMLOCK_CHAOS_DOCKER_SCENARIOS"

// SkipScenario skips tb when backend is Docker and DockerScenariosEnv
// leaves scenario out.
func SkipScenario(tb testing.TB, backend, scenario string) {
	tb.Helper()
	only := os.Getenv(DockerScenariosEnv)
	if backend != cluster.BackendDocker || only == "" || slices.Contains(strings.Split(only, ","), scenario) {
		return
	}
	tb.Skipf("%s=%s leaves it out on the Docker backend", DockerScenariosEnv, only)
}
