package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/report"
	"github.com/quorumlock/quorumlock/chaos/scenario"
	"github.com/quorumlock/quorumlock/internal/svgtest"
)

const ms = time.Millisecond

// sample is a hand-made result with an overlap and faults of every kind.
func sample() scenario.Result {
	a := checker.Interval{Lock: 1, Client: 0, Key: "k", Token: 1, Start: 10 * ms, End: 120 * ms, Released: true}
	b := checker.Interval{Lock: 2, Client: 1, Key: "k", Token: 2, Start: 100 * ms, End: 150 * ms, Released: true}
	return scenario.Result{
		Scenario: "restart-unsafe", Backend: "local", Seed: 42, Unsafe: true,
		Invariant: "mutual exclusion", Expect: "overlap detected", Outcome: "1 overlap(s) detected",
		Verdict: scenario.Pass, Elapsed: 2 * time.Second,
		Attempts: 2, Acquisitions: 2, Faults: 6, Overlaps: 1, Writes: 2, StaleRejected: 1,
		Checks:    []scenario.Check{{Name: "overlap produced and detected", OK: true, Detail: "1 overlaps"}},
		Nodes:     []string{"redis-0", "redis-1", "redis-2"},
		Clients:   2,
		Intervals: []checker.Interval{a, b},
		Overlap:   []checker.Overlap{{Key: "k", A: a, B: b}},
		FaultLog: []fault.Applied{
			{Fault: fault.Fault{Kind: fault.Kill, Node: 0}, Start: 5 * ms, End: 6 * ms},
			{Fault: fault.Fault{Kind: fault.Start, Node: 0}, Start: 50 * ms, End: 60 * ms},
			{Fault: fault.Fault{Kind: fault.Pause, Node: 1}, Start: 5 * ms, End: 5 * ms},
			{Fault: fault.Fault{Kind: fault.Cut, Node: 2, Clients: []int{0}}, Start: 1 * ms, End: 1 * ms},
			{Fault: fault.Fault{Kind: fault.Restart, Node: 2}, Start: 20 * ms, End: 40 * ms},
			{Fault: fault.Fault{Kind: fault.ClockJump, Node: 1, Arg: time.Second}, Start: 70 * ms, End: 71 * ms, Note: "1 keys expired"},
			{Fault: fault.Fault{Kind: fault.ClientPause, Node: -1, Clients: []int{1}, Arg: 30 * ms}, Start: 120 * ms, End: 150 * ms},
		},
		End: 160 * ms,
	}
}

func TestText(t *testing.T) {
	var buf bytes.Buffer
	failed := sample()
	failed.Scenario, failed.Verdict = "clock-jump", scenario.Fail
	failed.Checks = []scenario.Check{{Name: "overlap produced and detected", OK: false, Detail: "0 overlaps"}}
	if err := report.Text(&buf, []scenario.Result{sample(), failed}, map[string]string{"restart-unsafe": "x/restart-unsafe-local.svg"}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"SCENARIO", "OVERLAPS", "STALE REJECTED",
		"== restart-unsafe [PASS] on local, seed 42",
		"ok   overlap produced and detected: 1 overlaps",
		"FAIL overlap produced and detected: 0 overlaps",
		"overlap on k for 20ms",
		"timeline:  x/restart-unsafe-local.svg",
		"replay:    go run ./cmd/chaos --backend local --scenario restart-unsafe --seed 42",
		"2 scenarios: 1 pass, 1 fail. SOME SCENARIOS DID NOT SHOW THEIR EXPECTED OUTCOME.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := report.JSON(&buf, []scenario.Result{sample()}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []map[string]any `json:"results"`
		Summary string           `json:"summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 1 || got.Results[0]["overlaps"] != 1.0 || got.Results[0]["seed"] != 42.0 ||
		got.Results[0]["stale_writes_rejected"] != 1.0 || got.Results[0]["verdict"] != "PASS" {
		t.Errorf("JSON results = %v", got.Results)
	}
	if !strings.Contains(got.Summary, "1 pass") {
		t.Errorf("summary %q", got.Summary)
	}
}

func TestSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := report.SVG(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	svgtest.WellFormed(t, buf.Bytes())
	out := buf.String()
	for _, want := range []string{
		"<title>kill redis-0, 5ms to 60ms</title>",               // kill paired with its start
		"<title>pause redis-1, 5ms to 160ms</title>",             // still paused at the end
		"<title>cut redis-2 from client 0, 1ms to 160ms</title>", // never healed
		"<title>restart redis-2, 20ms to 40ms</title>",
		"<title>clock-jump redis-1 by +1s: 1 keys expired at 70ms</title>",
		"<title>pause client 1 for 30ms, 120ms to 150ms</title>",
		"overlap on k: lock 1 (client 0",
		"client 1", "redis-2",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	if n := strings.Count(out, `stroke="#ef4444"`); n != 2 {
		t.Errorf("%d overlap outlines, want one per holder (2)", n)
	}
}

func TestWriteSVGs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	skipped := sample()
	skipped.Scenario, skipped.Verdict = "restart-aof", scenario.Skip
	paths, err := report.WriteSVGs(dir, []scenario.Result{sample(), skipped})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || paths["restart-unsafe"] != filepath.Join(dir, "restart-unsafe-local.svg") {
		t.Fatalf("paths = %v", paths)
	}
	b, err := os.ReadFile(paths["restart-unsafe"])
	if err != nil {
		t.Fatal(err)
	}
	svgtest.WellFormed(t, b)
}

// TestSVGMergesDenseLocks checks that a long run draws about one bar per
// pixel, not one per lock.
func TestSVGMergesDenseLocks(t *testing.T) {
	r := sample()
	r.Overlap, r.Overlaps = nil, 0
	r.Intervals = nil
	for i := range 100000 {
		start := time.Duration(i) * ms
		r.Intervals = append(r.Intervals, checker.Interval{Lock: int64(i), Client: i % 2, Key: "k", Start: start, End: start + ms/2})
	}
	r.End = 100 * time.Second
	var buf bytes.Buffer
	if err := report.SVG(&buf, r); err != nil {
		t.Fatal(err)
	}
	svgtest.WellFormed(t, buf.Bytes())
	if n := strings.Count(buf.String(), "locks from"); n == 0 || n > 4000 {
		t.Errorf("%d merged bars for 100000 locks over ~1000 pixels", n)
	}
	if buf.Len() > 2<<20 {
		t.Errorf("SVG of %d bytes", buf.Len())
	}
}
