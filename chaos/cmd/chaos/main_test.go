package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// The isolation tests run this test binary as the chaos command's child
// (runIsolated runs os.Executable()): with childEnv set, TestMain is the
// command, and crashEnv makes it crash or hang as a library could.
const (
	childEnv = "QUORUMLOCK_CHAOS_TEST_CHILD"
	crashEnv = "QUORUMLOCK_CHAOS_TEST_CRASH"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		switch os.Getenv(crashEnv) {
		case "panic":
			go panicsOnItsOwnGoroutine()
		case "hang":
			hangsOutsideTheScenario()
		}
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	goleak.VerifyTestMain(m)
}

// panicsOnItsOwnGoroutine panics as a goroutine of the library would,
// where no harness can recover it.
func panicsOnItsOwnGoroutine() { panic("a goroutine nobody guards") }

// hangsOutsideTheScenario blocks for ever.
func hangsOutsideTheScenario() { select {} }

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func TestRunTextReportAndTimelines(t *testing.T) {
	dir := t.TempDir()
	code, out, errOut := runCmd(t, "--short", "--scenario", "restart-unsafe, clock-jump", "--seed", "7", "--svg-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"== restart-unsafe [PASS] on local, seed 7",
		"== clock-jump [PASS] on local, seed 7",
		"overlap(s) detected",
		"2 scenarios: 2 pass.",
		"mode: short (smoke test)",
		"for evidence run a soak: go run ./cmd/chaos --soak 30m",
		"EXPECTED", "overlap detected",
		"server:    redis-server",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, "[1] restart-unsafe: starting") || !strings.Contains(errOut, "clock-jump: PASS") {
		t.Errorf("no progress on stderr:\n%s", errOut)
	}
	for _, f := range []string{"restart-unsafe-local.svg", "clock-jump-local.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestRunJSON(t *testing.T) {
	code, out, errOut := runCmd(t, "--short", "--scenario", "clock-jump", "--json", "--svg-dir", "", "--no-progress")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr with --no-progress: %q", errOut)
	}
	var doc struct {
		Mode    string `json:"mode"`
		Results []struct {
			Scenario string `json:"scenario"`
			Overlaps int    `json:"overlaps"`
			Seed     uint64 `json:"seed"`
			Expected string `json:"expected"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(doc.Results) != 1 || doc.Results[0].Scenario != "clock-jump" || doc.Results[0].Overlaps == 0 || doc.Results[0].Seed == 0 ||
		doc.Results[0].Expected != "overlap detected" {
		t.Errorf("results = %+v", doc.Results)
	}
	if doc.Mode != "short (smoke test)" {
		t.Errorf("mode %q, want the short form to say it is a smoke test", doc.Mode)
	}
}

func TestRunUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--list"}, 0, "paused-client"},
		{[]string{"--scenario", "nope"}, 2, `no scenario "nope"`},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
		{[]string{"--clients", "0"}, 2, "must be positive"},
		{[]string{"--watchdog", "-1s"}, 2, "--watchdog not negative"},
		{[]string{"--client", "nope"}, 2, `no transport "nope"`},
		{[]string{"extra"}, 2, "unexpected arguments"},
		{[]string{"--backend", "nope", "--svg-dir", ""}, 1, `unknown backend "nope"`},
	} {
		code, _, errOut := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
}

// TestIsolate runs scenarios each in a process of its own: a child that
// reports passes through as it is, with its timeline; a child that
// panics on an unguarded goroutine, or hangs where no watchdog of its own
// sees it, fails its scenario only, with the stacks the runtime printed.
func TestIsolate(t *testing.T) {
	t.Setenv(childEnv, "1")
	dir := t.TempDir()
	code, out, errOut := runCmd(t, "--isolate", "--short", "--scenario", "clock-jump", "--seed", "7", "--svg-dir", dir)
	if code != 0 || !strings.Contains(out, "== clock-jump [PASS] on local, seed 7") || !strings.Contains(out, "timeline:  "+filepath.Join(dir, "clock-jump-local.svg")) {
		t.Fatalf("isolated clock-jump: exit %d\n%s\n%s", code, out, errOut)
	}

	t.Setenv(crashEnv, "panic")
	code, out, _ = runCmd(t, "--isolate", "--short", "--scenario", "clock-jump,restart-unsafe", "--svg-dir", dir)
	if code != 1 || strings.Count(out, "FAIL its process survives: its process ended without a report: exit status 2") != 2 ||
		!strings.Contains(out, "chaos.panicsOnItsOwnGoroutine()") || !strings.Contains(out, "2 scenarios: 2 fail") {
		t.Errorf("children that panic: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "clock-jump-local-goroutines.txt")); err != nil || !strings.Contains(string(b), "a goroutine nobody guards") {
		t.Errorf("the crashed child's stacks were not written beside the timelines: %v", err)
	}

	t.Setenv(crashEnv, "hang")
	defer func(g time.Duration) { childGrace = g }(childGrace)
	childGrace = time.Second
	code, out, _ = runCmd(t, "--isolate", "--short", "--watchdog", "1s", "--scenario", "clock-jump", "--svg-dir", "", "--json")
	var doc struct {
		Results []struct {
			Verdict string `json:"verdict"`
			Aborted string `json:"aborted"`
			Dump    string `json:"goroutine_dump"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || len(doc.Results) != 1 {
		t.Fatalf("a child that hangs: exit %d, %v\n%s", code, err, out)
	}
	if r := doc.Results[0]; r.Verdict != "FAIL" || !strings.Contains(r.Aborted, "after its watchdog (SIGQUIT)") ||
		!strings.Contains(r.Dump, "chaos.hangsOutsideTheScenario") {
		t.Errorf("a child that hangs: %s, %q\n%s", r.Verdict, r.Aborted, r.Dump)
	}
}
