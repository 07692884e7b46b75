package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/sim/schedule"
)

// The test binary is the command when SIM_CMD_MAIN is set: the tests run
// it as a user would, workers included (they are the same binary).
func TestMain(m *testing.M) {
	if os.Getenv("SIM_CMD_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

func command(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SIM_CMD_MAIN=1")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestExploreWithWorkers(t *testing.T) {
	out, code := command(t, "--schedules", "16", "--workers", "2", "--from", "1", "--quiet")
	if code != 0 || !strings.Contains(out, "16 schedules") || !strings.Contains(out, ": 0 failed") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestReplaySeed(t *testing.T) {
	out, code := command(t, "--seed", "3", "--repeat", "2")
	if code != 0 || !strings.Contains(out, "seed 3: failed 0 of 2 runs") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestReplayFileAndTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, schedule.Generate(5, schedule.Options{}).JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := command(t, "--replay", path, "--trace")
	if code != 0 || !strings.Contains(out, "EXEC") || !strings.Contains(out, "seed 5: failed 0 of 1 runs") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
}

func TestBadUsage(t *testing.T) {
	if _, code := command(t, "--kinds", "nonsense"); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if _, code := command(t, "--defect", "no-such-defect"); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
}

// A soak replays and shrinks the first failure of each signature; a
// shorter exploration only its first.
func TestSoakShrinksEachDistinctFailure(t *testing.T) {
	fs := []line{{Seed: 1, Sig: []string{"overlap"}}, {Seed: 2, Sig: []string{"overlap"}}, {Seed: 3, Sig: []string{"no-key-left"}}}
	seeds := func(ls []line) (s []uint64) {
		for _, l := range ls {
			s = append(s, l.Seed)
		}
		return s
	}
	if got := seeds(toShrink(config{}, fs)); len(got) != 1 || got[0] != 1 {
		t.Fatalf("exploration shrinks %v, want [1]", got)
	}
	if got := seeds(toShrink(config{soak: time.Hour}, fs)); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Fatalf("soak shrinks %v, want [1 3]", got)
	}
}
