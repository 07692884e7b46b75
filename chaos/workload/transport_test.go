package workload_test

import (
	"context"
	"slices"
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
	orders := map[string]bool{}
	n := len(workload.Transports) + 1 // two pipelined clients, then one of each other transport
	for seed := range uint64(50) {
		mix := workload.MixTransports(seed)
		var got []workload.Transport
		for i := range n {
			got = append(got, mix(i))
		}
		if got[0] != workload.Pipelined || got[1] != workload.Pipelined {
			t.Fatalf("seed %d: clients 0 and 1 over %v, %v; want the pipelined transport", seed, got[0], got[1])
		}
		sorted := slices.Clone(got[2:])
		slices.Sort(sorted)
		want := slices.Clone(workload.Transports[1:])
		slices.Sort(want)
		if !slices.Equal(sorted, want) {
			t.Fatalf("seed %d: clients' transports %v, want two pipelined, then each other one once", seed, got)
		}
		if mix(n) != got[0] || mix(n+2) != got[2] {
			t.Errorf("seed %d: client %d does not start the order again", seed, n)
		}
		if again := workload.MixTransports(seed); again(3) != got[3] {
			t.Errorf("seed %d: two mixes differ", seed)
		}
		orders[strings.Join(toStrings(got), ",")] = true
	}
	if len(orders) != 6 {
		t.Errorf("50 seeds drew %d orders of the three other transports, want all 6", len(orders))
	}
	if all := workload.AllOver(workload.Rueidis); all(0) != workload.Rueidis || all(7) != workload.Rueidis {
		t.Error("AllOver")
	}
}

func toStrings(ts []workload.Transport) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
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
