package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/bench"
	"github.com/quorumlock/quorumlock/internal/svgtest"
	"go.uber.org/goleak"
)

// TestHarnessShort runs the whole harness at tiny durations and checks the
// report's structure: every row is there, each either measured something
// or says it hung, and the JSON, table and plot come out whole. It asserts
// nothing about speed, nor about what a library did under load: errors,
// hangs and targets are findings of a run, not properties of the harness.
func TestHarnessShort(t *testing.T) {
	defer goleak.VerifyNone(t)
	opts := bench.ShortOptions()
	var log bytes.Buffer
	opts.Log = &log
	r, err := bench.Run(context.Background(), opts)
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}

	nodes := []int{1, 3, 5}
	if !slices.Equal(r.Options.Nodes, nodes) {
		t.Fatalf("nodes %v, want %v", r.Options.Nodes, nodes)
	}
	if len(r.Impls) != len(bench.Impls()) {
		t.Errorf("%d implementations in the report, want %d", len(r.Impls), len(bench.Impls()))
	}
	for _, im := range bench.Impls() {
		for _, n := range nodes {
			if im.Supports(bench.Latency, n) {
				row := find(t, r.Latency, "latency", func(x bench.LatencyRow) bool { return x.Impl == im.Name && x.Nodes == n })
				if !row.Hung && (row.Count <= 0 || row.P50 <= 0 || row.AllocsPerCycle <= 0 || row.StealPercent == nil) {
					t.Errorf("latency %s N=%d: %+v", im.Name, n, row)
				}
			}
			for _, g := range r.Options.Goroutines {
				if im.Supports(bench.Throughput, n) {
					row := find(t, r.Throughput, "throughput", func(x bench.ThroughputRow) bool {
						return x.Impl == im.Name && x.Nodes == n && x.Goroutines == g && x.Keys == 0
					})
					if !row.Hung && (row.Cycles <= 0 || row.PerSec <= 0 || row.AllocsPerCycle <= 0) {
						t.Errorf("throughput %s N=%d g=%d: %+v", im.Name, n, g, row)
					}
				}
			}
			if im.Supports(bench.Throughput, n) {
				// The shared-keys row: cycles may fail there (a peer that
				// gives up waiting), but the row must be there.
				find(t, r.Throughput, "shared throughput", func(x bench.ThroughputRow) bool {
					return x.Impl == im.Name && x.Nodes == n && x.Goroutines == r.Options.SharedGoroutines && x.Keys == r.Options.SharedKeys
				})
			}
			if im.Supports(bench.Contention, n) {
				row := find(t, r.Contention, "contention", func(x bench.ContentionRow) bool { return x.Impl == im.Name && x.Nodes == n })
				if len(row.Shares) != r.Options.Clients || !row.Hung && (row.Acquisitions <= 0 || row.Wait.Count != row.Acquisitions) {
					t.Errorf("contention %s N=%d: %+v", im.Name, n, row)
				}
			}
			for _, fault := range []string{bench.Frozen, bench.Killed} {
				if !im.Supports(bench.Degraded, n) || n < 3 {
					continue
				}
				// Whether a turn completed cycles or hung is a finding of
				// the run, not of the harness: only the row must be there.
				find(t, r.Degraded, "degraded", func(x bench.DegradedRow) bool {
					return x.Impl == im.Name && x.Nodes == n && x.Fault == fault
				})
			}
		}
	}
	// The latency scenario takes LatencyRounds turns per implementation,
	// the others Rounds.
	for sc, want := range map[string]int{"latency": r.Options.LatencyRounds, "throughput": r.Options.Rounds * (len(r.Options.Goroutines) + 1)} {
		turns := regexp.MustCompile(`(?m)^N=1 `+sc+` +`+bench.Ours+` +round \d+:`).FindAllString(log.String(), -1)
		if len(turns) != want {
			t.Errorf("%d %s turns of %s at N=1, want %d", len(turns), sc, bench.Ours, want)
		}
	}
	if s := r.Env.StealPercent; s == nil || *s < 0 || *s > 100 {
		t.Errorf("CPU steal over the run: %v, want a percentage", s)
	}
	if len(r.Targets) == 0 {
		t.Error("no targets evaluated")
	}
	for _, tg := range r.Targets {
		if tg.Name == "" || tg.Goal == "" || tg.Value == "" {
			t.Errorf("incomplete target %+v", tg)
		}
	}

	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back bench.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatalf("JSON does not parse: %v", err)
	}
	if len(back.Latency) != len(r.Latency) || len(back.Throughput) != len(r.Throughput) ||
		len(back.Contention) != len(r.Contention) || len(back.Degraded) != len(r.Degraded) || len(back.Targets) != len(r.Targets) {
		t.Error("JSON round trip lost rows")
	}

	var table bytes.Buffer
	if err := r.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(a) ", "(b) ", "(c) ", "(d) ", "targets", "CPU steal", bench.Ours, bench.Redsync, bench.Redislock, bench.Raw} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q", want)
		}
	}

	var svg bytes.Buffer
	if err := r.WriteSVG(&svg); err != nil {
		t.Fatal(err)
	}
	svgtest.WellFormed(t, svg.Bytes())
	if n := strings.Count(svg.String(), "<polyline"); n == 0 {
		t.Error("plot has no lines")
	}
}

func find[T any](t *testing.T, rows []T, what string, match func(T) bool) T {
	t.Helper()
	i := slices.IndexFunc(rows, match)
	if i < 0 {
		var zero T
		t.Errorf("%s row missing (want %T matching)", what, zero)
		return zero
	}
	return rows[i]
}
