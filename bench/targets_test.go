package bench_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/bench"
)

// TestEvaluate checks the target checker on hand-made reports: a ratio on
// the right side of its bound is met, on the wrong side not, and a missing
// row makes a target unknown, never met.
func TestEvaluate(t *testing.T) {
	lat := func(impl string, n int, p50, p99, allocs float64) bench.LatencyRow {
		return bench.LatencyRow{Impl: impl, Nodes: n, Dist: bench.Dist{Count: 100, P50: p50, P99: p99}, AllocsPerCycle: allocs}
	}
	base := func() *bench.Report {
		return &bench.Report{
			Options: bench.Options{Nodes: []int{1, 5}},
			Latency: []bench.LatencyRow{
				lat(bench.Ours, 5, 70, 200, 40),
				lat(bench.Redsync, 5, 100, 300, 96),
				lat(bench.Raw, 5, 75, 150, 39),
				lat(bench.Ours, 1, 50, 100, 27),
				lat(bench.Redsync, 1, 60, 100, 28),
				lat(bench.Redislock, 1, 52, 100, 30),
			},
			Throughput: []bench.ThroughputRow{
				{Impl: bench.Ours, Nodes: 5, Goroutines: 64, PerSec: 2100},
				{Impl: bench.Redsync, Nodes: 5, Goroutines: 64, PerSec: 1000},
				{Impl: bench.Ours, Nodes: 5, Goroutines: 64, Keys: 16, PerSec: 100}, // not the target's row
				{Impl: bench.Ours, Nodes: 1, Goroutines: 64, PerSec: 3000},
				{Impl: bench.Redislock, Nodes: 1, Goroutines: 64, PerSec: 2000},
			},
			Contention: []bench.ContentionRow{
				{Impl: bench.Ours, Nodes: 5, Acquisitions: 80, Wait: bench.Dist{P99: 900}, MinShareOfMean: 0.8},
				{Impl: bench.Redsync, Nodes: 5, Acquisitions: 80, Wait: bench.Dist{P99: 10000}, MinShareOfMean: 0.2},
			},
			Degraded: []bench.DegradedRow{
				{Impl: bench.Ours, Nodes: 5, Fault: bench.Frozen, Dist: bench.Dist{Count: 10, P99: 390}, Goroutines: 3, Conns: 5, Visible: true},
			},
		}
	}
	tests := []struct {
		name   string
		change func(r *bench.Report)
		target string
		known  bool
		met    bool
	}{
		{"p50 vs redsync met", nil, "uncontended p50, N=5, vs redsync", true, true},
		{"p50 vs redsync not met", func(r *bench.Report) { r.Latency[0].P50 = 71 }, "uncontended p50, N=5, vs redsync", true, false},
		{"p50 vs raw met", nil, "uncontended p50, N=5, vs raw limit", true, true},
		{"p50 vs raw not met", func(r *bench.Report) { r.Latency[2].P50 = 69 }, "uncontended p50, N=5, vs raw limit", true, false},
		{"p50 vs raw unknown", func(r *bench.Report) { r.Latency = append(r.Latency[:2], r.Latency[3:]...) }, "uncontended p50, N=5, vs raw limit", false, false},
		{"p50 N=1 vs redislock met", nil, "uncontended p50, N=1, vs redislock", true, true},
		{"p50 N=1 vs redislock not met", func(r *bench.Report) { r.Latency[3].P50 = 53 }, "uncontended p50, N=1, vs redislock", true, false},
		{"throughput met", nil, "throughput, 64 goroutines, N=5, vs redsync", true, true},
		{"throughput not met", func(r *bench.Report) { r.Throughput[0].PerSec = 1999 }, "throughput, 64 goroutines, N=5, vs redsync", true, false},
		{"throughput N=1 met", nil, "throughput, 64 goroutines, N=1, vs redislock", true, true},
		{"throughput N=1 not met", func(r *bench.Report) { r.Throughput[3].PerSec = 2999 }, "throughput, 64 goroutines, N=1, vs redislock", true, false},
		{"throughput N=1 unknown", func(r *bench.Report) { r.Throughput = r.Throughput[:4] }, "throughput, 64 goroutines, N=1, vs redislock", false, false},
		{"frozen p99 met", nil, "one of 5 frozen: p99 vs our healthy p99", true, true},
		{"frozen p99 not met", func(r *bench.Report) { r.Degraded[0].P99 = 401 }, "one of 5 frozen: p99 vs our healthy p99", true, false},
		{"frozen p99 vs the turn's own baseline", func(r *bench.Report) { r.Degraded[0].Healthy.P99 = 100 }, "one of 5 frozen: p99 vs our healthy p99", true, false},
		{"frozen hung", func(r *bench.Report) { r.Degraded[0].Hung = true }, "degraded (frozen, killed; N=3, 5): no hang", true, false},
		{"frozen visible", nil, "one of 5 frozen: frozen node visible to the caller", true, true},
		{"frozen conns unbounded", func(r *bench.Report) { r.Degraded[0].Conns = 11 }, "degraded: connections left at the end <= 2N", true, false},
		{"frozen goroutines bounded", func(r *bench.Report) { r.Degraded[0].Goroutines = 14 }, "degraded: goroutines left at the end <= 2N+4", true, true},
		{"frozen goroutines unbounded", func(r *bench.Report) { r.Degraded[0].Goroutines = 15 }, "degraded: goroutines left at the end <= 2N+4", true, false},
		{"allocs met", nil, "allocs per cycle, N=5, vs redsync", true, true},
		{"allocs not met", func(r *bench.Report) { r.Latency[0].AllocsPerCycle = 49 }, "allocs per cycle, N=5, vs redsync", true, false},
		{"allocs N=1 met", nil, "allocs per cycle, N=1, vs redsync", true, true},
		{"allocs N=1 not met", func(r *bench.Report) { r.Latency[3].AllocsPerCycle = 29 }, "allocs per cycle, N=1, vs redsync", true, false},
		{"wait met", nil, "contention, N=5: p99 wait vs redsync", true, true},
		{"wait not met", func(r *bench.Report) { r.Contention[0].Wait.P99 = 1001 }, "contention, N=5: p99 wait vs redsync", true, false},
		{"spurious", func(r *bench.Report) { r.Contention[0].Spurious = 1 }, "contention, N=5: no spurious failure", true, false},
		{"fairness not met", func(r *bench.Report) { r.Contention[0].MinShareOfMean = 0.49 }, "contention, N=5: smallest share vs mean", true, false},
		{"fairness unknown", func(r *bench.Report) { r.Contention = nil }, "contention, N=5: smallest share vs mean", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base()
			if tt.change != nil {
				tt.change(r)
			}
			for _, tg := range r.Evaluate() {
				if tg.Name == tt.target {
					if tg.Known != tt.known || tg.Met != tt.met {
						t.Errorf("%s: known %v met %v (%s), want known %v met %v", tg.Name, tg.Known, tg.Met, tg.Value, tt.known, tt.met)
					}
					return
				}
			}
			t.Errorf("no target %q", tt.target)
		})
	}
}
