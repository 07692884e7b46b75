package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/report"
	"github.com/quorumlock/quorumlock/chaos/scenario"
	"github.com/quorumlock/quorumlock/chaos/workload"
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
		Verdict: scenario.Pass, Elapsed: 2 * time.Second, Expected: scenario.ExpectOverlap,
		Transports: []scenario.TransportUse{{Transport: workload.Pipelined, Clients: []int{0}, Acquired: 1},
			{Transport: workload.GoRedis, Clients: []int{1}, Acquired: 1}},
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
			{Fault: fault.Fault{Kind: fault.DelayReplies, Node: 0, Clients: []int{1}, Arg: time.Second}, Start: 80 * ms, End: 80 * ms},
			{Fault: fault.Fault{Kind: fault.Heal, Node: 0, Clients: []int{1}}, Start: 90 * ms, End: 90 * ms},
			{Fault: fault.Fault{Kind: fault.ScriptFlush, Node: 2}, Start: 95 * ms, End: 96 * ms},
			{Fault: fault.Fault{Kind: fault.RestartKept, Node: 1}, Start: 100 * ms, End: 110 * ms},
		},
		End: 160 * ms,
	}
}

func TestText(t *testing.T) {
	var buf bytes.Buffer
	failed := sample()
	failed.Scenario, failed.Verdict = "clock-jump", scenario.Fail
	failed.Checks = []scenario.Check{{Name: "overlap produced and detected", OK: false, Detail: "0 overlaps"}}
	suite := report.Suite{Duration: 30 * time.Second, SVGs: map[string]string{"restart-unsafe": "x/restart-unsafe-local.svg"}}
	if err := report.Text(&buf, suite, []scenario.Result{sample(), failed}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	wants := []string{
		"mode: full: random workloads of 30s",
		"SCENARIO", "EXPECTED", "OVERLAPS", "STALE REJECTED",
		"  overlap detected     PASS", "  overlap detected     FAIL",
		"expected:  overlap detected: overlap detected",
		"clients:   pipelined [0]: 1 acquired; goredis [1]: 1 acquired",
		"Locks acquired per transport over the suite: pipelined 2, goredis 2.",
		"== restart-unsafe [PASS] on local, seed 42",
		"ok   overlap produced and detected: 1 overlaps",
		"FAIL overlap produced and detected: 0 overlaps",
		"overlap on k for 20ms",
		"timeline:  x/restart-unsafe-local.svg",
		"replay:    go run ./cmd/chaos --backend local --scenario restart-unsafe --seed 42",
		"2 scenarios: 1 pass, 1 fail. SOME SCENARIOS DID NOT SHOW THEIR EXPECTED OUTCOME.",
	}
	mustContain(t, out, wants...)
	if strings.Contains(out, "smoke") {
		t.Errorf("a full run's report calls itself a smoke test:\n%s", out)
	}
}

// mustContain fails the test for each of wants that out lacks.
func mustContain(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestTextShortIsASmokeTest checks that the short form's report says it
// is a smoke test, at the top and at the end, and points to a soak.
func TestTextShortIsASmokeTest(t *testing.T) {
	var buf bytes.Buffer
	if err := report.Text(&buf, report.Suite{Short: true, Duration: scenario.Short}, []scenario.Result{sample()}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, "mode: short (smoke test): --short runs each random workload for 3s only") ||
		!strings.Contains(out, "This was a smoke test (--short); for evidence run a soak: go run ./cmd/chaos --soak 30m") {
		t.Errorf("the short report does not say it is a smoke test:\n%s", out)
	}
}

// aborted is a safe scenario that hung, with a dump of 100 lines.
func aborted() scenario.Result {
	r := sample()
	r.Scenario, r.Unsafe, r.Expected, r.Verdict = "safe-plain", false, scenario.ExpectSafe, scenario.Fail
	r.Aborted = "scenario: hung: no end within the watchdog's 1m0s"
	for i := range 100 {
		r.Dump += fmt.Sprintf("goroutine %d [chan receive]:\n", i)
	}
	return r
}

func TestTextAborted(t *testing.T) {
	var buf bytes.Buffer
	suite := report.Suite{Dumps: map[string]string{"safe-plain": "x/safe-plain-local-goroutines.txt"}}
	if err := report.Text(&buf, suite, []scenario.Result{aborted()}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	mustContain(t, out,
		"ABORTED:   scenario: hung: no end within the watchdog's 1m0s; 100 lines of goroutine stacks, all of it in x/safe-plain-local-goroutines.txt",
		"     goroutine 59 [chan receive]:",
		"     ... 40 more lines",
		"  0 overlaps     FAIL",
	)
	if strings.Contains(out, "goroutine 60 ") {
		t.Error("the text report prints the whole dump")
	}
}

func TestWriteDumps(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	paths, err := report.WriteDumps(dir, []scenario.Result{sample(), aborted()})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 1 || paths["safe-plain"] != filepath.Join(dir, "safe-plain-local-goroutines.txt") {
		t.Fatalf("paths = %v", paths)
	}
	if b, err := os.ReadFile(paths["safe-plain"]); err != nil || string(b) != aborted().Dump {
		t.Errorf("dump file: %v, %d bytes", err, len(b))
	}
}

func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := report.JSON(&buf, report.Suite{Short: true, Duration: scenario.Short}, []scenario.Result{sample(), aborted()}); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Mode    string           `json:"mode"`
		Note    string           `json:"note"`
		Results []map[string]any `json:"results"`
		Summary string           `json:"summary"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 2 || got.Results[0]["overlaps"] != 1.0 || got.Results[0]["seed"] != 42.0 ||
		got.Results[0]["stale_writes_rejected"] != 1.0 || got.Results[0]["verdict"] != "PASS" ||
		got.Results[0]["expected"] != scenario.ExpectOverlap || got.Results[1]["expected"] != scenario.ExpectSafe {
		t.Errorf("JSON results = %v", got.Results)
	}
	if d, _ := got.Results[1]["goroutine_dump"].(string); d != aborted().Dump || got.Results[1]["aborted"] != aborted().Aborted {
		t.Errorf("JSON of an aborted scenario: aborted %v, dump of %d bytes", got.Results[1]["aborted"], len(d))
	}
	if tr, _ := got.Results[0]["transports"].([]any); len(tr) != 2 {
		t.Errorf("JSON transports = %v", got.Results[0]["transports"])
	}
	if !strings.Contains(got.Summary, "1 pass") {
		t.Errorf("summary %q", got.Summary)
	}
	if tot := report.TransportTotals([]scenario.Result{sample(), aborted()}); len(tot) != 2 || tot[0].Acquired != 2 || tot[0].Clients != 2 {
		t.Errorf("TransportTotals = %+v", tot)
	}
	if got.Mode != "short (smoke test)" || !strings.Contains(got.Note, "--soak") {
		t.Errorf("JSON mode %q, note %q: want a smoke test pointing to --soak", got.Mode, got.Note)
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
		"<title>delay the replies of redis-0 to client 1 by 1s, 80ms to 90ms</title>",
		"<title>script-flush redis-2 at 95ms</title>",
		"<title>restart redis-1 keeping its data, 100ms to 110ms</title>",
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

// The report tells, per entry point and process lifetime, which scenarios
// drove them and how each ended; results without Driven are left out.
func TestDriven(t *testing.T) {
	res := []scenario.Result{
		{Scenario: "restart-pipelined-fresh", Verdict: scenario.Pass, Driven: &scenario.Driven{Transport: workload.Pipelined, Lifetime: "fresh"}},
		{Scenario: "restart-goredis-per-lock", Verdict: scenario.Fail, Driven: &scenario.Driven{Transport: workload.GoRedis, Lifetime: "per-lock"}},
		{Scenario: "restart-pipelined-aof", Verdict: scenario.Skip, Driven: &scenario.Driven{Transport: workload.Pipelined, Lifetime: "fresh"}},
		sample(),
	}
	cells := report.Driven(res)
	if len(cells) != 2 || cells[0].EntryPoint != "pipelined" || len(cells[0].Scenarios) != 2 || cells[1].Verdicts[0] != "FAIL" {
		t.Fatalf("Driven = %+v", cells)
	}
	var b bytes.Buffer
	if err := report.Text(&b, report.Suite{}, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Driven, per entry point and process lifetime", "restart-pipelined-fresh PASS, restart-pipelined-aof SKIP", "restart-goredis-per-lock FAIL"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
}
