package workload_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/internal/chaostest"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// TestEveryTransportLocks gives each client one transport and checks, on
// real masters, that each takes and releases locks through its own
// proxies, and that the run's history holds every client's grants.
func TestEveryTransportLocks(t *testing.T) {
	c := chaostest.Start(t, cluster.BackendLocal, cluster.Config{Nodes: 3, Password: "transport-secret"})
	e, err := workload.NewEnv(c, workload.EnvConfig{Clients: len(workload.Transports), Seed: 5,
		Transport: func(i int) workload.Transport { return workload.Transports[i] }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i, want := range workload.Transports {
		if got := e.Transport(i); got != want {
			t.Errorf("client %d: transport %s, want %s", i, got, want)
		}
		if d := e.TransportDetail(i); !strings.HasPrefix(d, string(want)) {
			t.Errorf("client %d: detail %q", i, d)
		}
		for range 3 {
			h, err := e.Client(i).Acquire(ctx, "k", time.Second, false)
			if err != nil {
				t.Fatalf("client %d over %s: %v", i, want, err)
			}
			if err := h.Release(ctx); err != nil {
				t.Errorf("client %d over %s: release: %v", i, want, err)
			}
		}
		for j := range c.Nodes() {
			if st := e.Net.Link(i, j).Stats(); st.Accepted == 0 {
				t.Errorf("client %d over %s never went through its proxy to master %d", i, want, j)
			}
		}
	}
	if n := e.Counts(); n.Acquired != 3*len(workload.Transports) {
		t.Errorf("%d grants recorded, want %d", n.Acquired, 3*len(workload.Transports))
	}
	if left, err := e.AwaitNoKeys(ctx, 3*time.Second); err != nil || left != 0 {
		t.Errorf("%d keys left (%v)", left, err)
	}
}

func TestMixTransports(t *testing.T) {
	seen := map[workload.Transport]int{}
	for k := range 3 {
		mix := workload.MixTransports(k)
		for c := range 12 {
			got := mix(c)
			if (got == workload.Pipelined) != (c%4 != 3) {
				t.Fatalf("k %d: client %d over %s; want three of four pipelined, the fourth not", k, c, got)
			}
			seen[got]++
		}
		if mix(3) == mix(7) || mix(3) == mix(11) || mix(7) == mix(11) {
			t.Errorf("k %d: clients 3, 7 and 11 over %s, %s, %s; want the three other transports", k, mix(3), mix(7), mix(11))
		}
		if next := workload.MixTransports(k + 1); next(3) != mix(7) {
			t.Errorf("k %d: the next k's client 3 is over %s, want %s", k, next(3), mix(7))
		}
	}
	for _, tr := range workload.Transports {
		if seen[tr] == 0 {
			t.Errorf("no client over %s in three turns", tr)
		}
	}
	if all := workload.AllOver(workload.Rueidis); all(0) != workload.Rueidis || all(7) != workload.Rueidis {
		t.Error("AllOver")
	}
}

func TestParseTransport(t *testing.T) {
	for _, tr := range workload.Transports {
		if got, err := workload.ParseTransport(string(tr)); err != nil || got != tr {
			t.Errorf("ParseTransport(%q) = %q, %v", tr, got, err)
		}
	}
	if _, err := workload.ParseTransport("redigo"); err == nil || !strings.Contains(err.Error(), "pipelined") {
		t.Errorf("ParseTransport of an unknown name: %v", err)
	}
}
