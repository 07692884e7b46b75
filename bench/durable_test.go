package bench_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/bench"
	"go.uber.org/goleak"
)

// TestDurabilityShort runs the durability measurement at tiny durations on
// a server with WAITAOF (valkey-server where it is installed, else the
// default server, skipped if that has none): four rows, plain and durable
// on each fsync policy, each with cycles and no error, and the table names
// the durable rows' cost. It asserts nothing about speed.
func TestDurabilityShort(t *testing.T) {
	defer goleak.VerifyNone(t)
	server := ""
	if _, err := exec.LookPath("valkey-server"); err == nil {
		server = "valkey-server"
	}
	rows, err := bench.Durability(context.Background(), bench.DurabilityOptions{
		Server: server, Latency: 200 * time.Millisecond, Throughput: 200 * time.Millisecond, Rounds: 1, Goroutines: 8})
	if errors.Is(err, bench.ErrNoWAITAOF) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"always plain", "always durable", "everysec plain", "everysec durable"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, r := range rows {
		if got := r.Fsync + " " + r.Impl; got != want[i] {
			t.Errorf("row %d is %q, want %q", i, got, want[i])
		}
		if r.Latency.Count == 0 || r.PerSec <= 0 || r.Errors != 0 {
			t.Errorf("%s %s: %d latency cycles, %.0f/s, %d errors (%s): want cycles and no error", r.Fsync, r.Impl, r.Latency.Count, r.PerSec, r.Errors, r.FirstError)
		}
	}
	var b strings.Builder
	bench.PrintDurability(&b, rows)
	if n := strings.Count(b.String(), "thrpt "); n != 2 {
		t.Errorf("table has %d cost columns filled, want 2 (the durable rows):\n%s", n, b.String())
	}
}
