package scenario_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/scenario"
)

// TestComposeBackend drives the masters of the repository's
// docker-compose.yml: a scenario runs on them, one that needs another
// persistence is skipped, and the harness leaves them running.
func TestComposeBackend(t *testing.T) {
	file, err := filepath.Abs("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	chaostest.ComposeUp(t, file)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	opts := scenario.Options{Backend: cluster.BackendCompose, Duration: scenario.Short}
	unsafe, _ := scenario.Lookup("restart-unsafe")
	r := unsafe.Run(ctx, opts)
	if r.Verdict != scenario.Pass || r.Overlaps == 0 {
		t.Fatalf("restart-unsafe on compose: %s (%s), %d overlaps, checks %+v", r.Verdict, r.Reason, r.Overlaps, r.Checks)
	}
	aof, _ := scenario.Lookup("restart-aof")
	if r := aof.Run(ctx, opts); r.Verdict != scenario.Skip {
		t.Errorf("restart-aof on a compose project without AOF: %s (%s), want SKIP", r.Verdict, r.Reason)
	}

	// Faults left in place are undone by Close.
	c, err := cluster.OpenCompose(ctx, cluster.ComposeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := c.Nodes()
	if err := nodes[0].Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := nodes[1].Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes[:2] {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, _, err := cluster.Get(pctx, n.Addr(), "any")
		cancel()
		if err != nil {
			t.Errorf("%s after Close: %v", n.Name(), err)
		}
	}
	if _, err := cluster.OpenCompose(ctx, cluster.ComposeConfig{Config: cluster.Config{Persistence: cluster.PersistenceAOF}}); !errors.Is(err, cluster.ErrUnsupported) {
		t.Errorf("OpenCompose asking for AOF from a project without: %v, want ErrUnsupported", err)
	}
}
