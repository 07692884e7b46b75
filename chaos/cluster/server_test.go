package cluster_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
)

func TestServerBinary(t *testing.T) {
	t.Setenv(cluster.ServerEnv, "")
	if got := (cluster.Config{}).ServerBinary(); got != cluster.DefaultServer {
		t.Errorf("default server %q, want %q", got, cluster.DefaultServer)
	}
	t.Setenv(cluster.ServerEnv, "valkey-server")
	if got := (cluster.Config{}).ServerBinary(); got != "valkey-server" {
		t.Errorf("server with $%s set = %q", cluster.ServerEnv, got)
	}
	if got := (cluster.Config{Server: "/opt/redis-server"}).ServerBinary(); got != "/opt/redis-server" {
		t.Errorf("Config.Server = %q, want it to win over the environment", got)
	}
	if _, err := cluster.StartLocal(ctxT(t), cluster.Config{Nodes: 1, Server: "no-such-server-binary"}); err == nil ||
		!strings.Contains(err.Error(), "no-such-server-binary") {
		t.Errorf("a cluster of a missing binary: %v, want an error naming it", err)
	}
}

// TestValkeyCluster starts a local cluster of valkey-server processes,
// where valkey-server is installed, and checks that the nodes are Valkey.
func TestValkeyCluster(t *testing.T) {
	if _, err := exec.LookPath("valkey-server"); err != nil {
		t.Skip("valkey-server is not installed (scripts/ensure-valkey.sh)")
	}
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 2, Server: "valkey-server"})
	for _, n := range c.Nodes() {
		info, err := redis.String(do(t, n.Addr(), "INFO", "server"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(info, "valkey_version:") && !strings.Contains(info, "server_name:valkey") {
			t.Errorf("%s is not a Valkey server:\n%s", n.Name(), info)
		}
	}
}
