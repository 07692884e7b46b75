package cluster_test

import (
	"context"
	"net"
	"slices"
	"strconv"
	"testing"

	dc "github.com/ory/dockertest/v3/docker"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// A port that another process takes between its pick and the container's
// start ("address already in use" from the engine) is picked again, and
// the container that could not start is not left behind.
func TestDockerPortTakenMeanwhile(t *testing.T) {
	if !slices.Contains(chaostest.Backends(t), cluster.BackendDocker) {
		t.Skip("no Docker engine")
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	picks := 0
	defer cluster.SetFreePort(func() (int, error) {
		picks++
		if picks == 1 {
			return takenPort, nil
		}
		return redisproc.FreePort()
	})()

	c := chaostest.Start(t, cluster.BackendDocker, cluster.Config{Nodes: 1})
	addr := c.Nodes()[0].Addr()
	if picks != 2 || addr == net.JoinHostPort("127.0.0.1", strconv.Itoa(takenPort)) {
		t.Errorf("%d ports picked, node at %s (%d was taken)", picks, addr, takenPort)
	}
	mustDo(t, addr, "PING")

	client, err := dc.NewClientFromEnv()
	if err != nil {
		t.Fatal(err)
	}
	left, err := client.ListContainers(dc.ListContainersOptions{All: true, Context: context.Background(),
		Filters: map[string][]string{"status": {"created"}, "name": {"quorumlock-chaos-"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Errorf("containers left created: %v", left[0].Names)
	}
}
