package mutation_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/chaos/mutation"
	"github.com/quorumlock/quorumlock/chaos/scenario"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDefectsMatchTheTree checks every defect against the repository as it
// is: each anchor occurs exactly once, names are unique, and every
// scenario named exists. A failure here means the library (or the suite)
// changed under a defect: update its anchor or its scenarios.
func TestDefectsMatchTheTree(t *testing.T) {
	root, err := mutation.RepoRoot(context.Background(), ".")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, s := range scenario.All() {
		known[s.Name] = true
	}
	defects := mutation.Defects()
	if len(defects) < 8 {
		t.Errorf("%d defects, the issue asks for at least 8", len(defects))
	}
	names := map[string]bool{}
	for _, d := range defects {
		if names[d.Name] || d.Name == "" || d.Description == "" || len(d.Edits) == 0 {
			t.Errorf("defect %q: duplicate or incomplete", d.Name)
		}
		names[d.Name] = true
		if err := d.Check(root); err != nil {
			t.Error(err)
		}
		if len(d.Scenarios) == 0 {
			t.Errorf("defect %s names no scenario", d.Name)
		}
		for _, s := range d.Scenarios {
			if !known[s] {
				t.Errorf("defect %s: no scenario %q", d.Name, s)
			}
		}
	}
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyAndRestore(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a/x.go"), "one two three", 0o644)
	write(t, filepath.Join(dir, "b.sh"), "echo hi\n", 0o755)
	d := mutation.Defect{Name: "d", Edits: []mutation.Edit{
		{File: "a/x.go", Anchor: "one", Replace: "1"},
		{File: "a/x.go", Anchor: "three", Replace: "3"},
		{File: "b.sh", Anchor: "hi", Replace: "ho"},
	}}
	if err := d.Check(dir); err != nil {
		t.Fatal(err)
	}
	restore, err := d.Apply(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "a/x.go")); got != "1 two 3" {
		t.Errorf("after Apply: %q", got)
	}
	if got := read(t, filepath.Join(dir, "b.sh")); got != "echo ho\n" {
		t.Errorf("after Apply: %q", got)
	}
	if st, _ := os.Stat(filepath.Join(dir, "b.sh")); st.Mode().Perm() != 0o755 {
		t.Errorf("mode after Apply %v, want 0755", st.Mode())
	}
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(dir, "a/x.go")); got != "one two three" {
		t.Errorf("after restore: %q", got)
	}
	if got := read(t, filepath.Join(dir, "b.sh")); got != "echo hi\n" {
		t.Errorf("after restore: %q", got)
	}
}

func TestStaleAnchorChangesNothing(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "x"), "aa b", 0o644)
	for _, anchor := range []string{"a", "zz"} { // twice, never
		d := mutation.Defect{Name: "d", Edits: []mutation.Edit{
			{File: "x", Anchor: "b", Replace: "B"},
			{File: "x", Anchor: anchor, Replace: "?"},
		}}
		if err := d.Check(dir); !errors.Is(err, mutation.ErrAnchor) {
			t.Errorf("Check with anchor %q: %v, want ErrAnchor", anchor, err)
		}
		if _, err := d.Apply(dir); !errors.Is(err, mutation.ErrAnchor) {
			t.Errorf("Apply with anchor %q: %v, want ErrAnchor", anchor, err)
		}
		if got := read(t, filepath.Join(dir, "x")); got != "aa b" {
			t.Errorf("a failed Apply changed the file: %q", got)
		}
	}
}

// TestCopyTree checks that the copy holds tracked and untracked files but
// not ignored ones, nor tracked files deleted from the working tree.
func TestCopyTree(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	gitRun := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	gitRun("init", "-q")
	write(t, filepath.Join(src, "tracked.go"), "package x", 0o644)
	write(t, filepath.Join(src, "gone.go"), "package x", 0o644)
	write(t, filepath.Join(src, ".gitignore"), "*.log\n", 0o644)
	gitRun("add", ".")
	gitRun("commit", "-q", "-m", "x")
	write(t, filepath.Join(src, "sub/untracked.lua"), "return 1", 0o644)
	write(t, filepath.Join(src, "build.log"), "noise", 0o644)
	os.Remove(filepath.Join(src, "gone.go"))

	root, err := mutation.RepoRoot(context.Background(), filepath.Join(src))
	if err != nil {
		t.Fatal(err)
	}
	n, err := mutation.CopyTree(context.Background(), root, dst)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dst, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(got)
	want := []string{".gitignore", "sub/untracked.lua", "tracked.go"}
	if !slices.Equal(got, want) || n != len(want) {
		t.Errorf("copied %d: %v, want %v", n, got, want)
	}
}

func TestPattern(t *testing.T) {
	if got, want := mutation.Pattern([]string{"safe-rw", "a.b"}), `^TestScenarios$/^local$/^(safe-rw|a\.b)$`; got != want {
		t.Errorf("Pattern = %q, want %q", got, want)
	}
	if got := mutation.Pattern(nil); got != "^TestScenarios$/^local$/" {
		t.Errorf("Pattern(nil) = %q", got)
	}
}

func TestJudge(t *testing.T) {
	failed := errors.New("exit status 1")
	for _, tc := range []struct {
		name      string
		out       string
		err       error
		scenarios []string
		want      mutation.Outcome
		failed    []string
	}{
		{"caught", "=== RUN   TestScenarios/local/a\n        --- FAIL: TestScenarios/local/a (1.00s)\n    --- FAIL: TestScenarios/local (1.00s)\nFAIL\n",
			failed, []string{"a", "b"}, mutation.Caught, []string{"a"}},
		{"missed", "        --- PASS: TestScenarios/local/a (1.00s)\n        --- PASS: TestScenarios/local/b (1.00s)\nok\n",
			nil, []string{"a", "b"}, mutation.Missed, nil},
		{"unknown scenario", "        --- PASS: TestScenarios/local/a (1.00s)\nok\n",
			nil, []string{"a", "nope"}, mutation.Broken, nil},
		{"nothing ran", "testing: warning: no tests to run\nok\n", nil, nil, mutation.Broken, nil},
		{"build failed", "# pkg\nredlock/x.go:1: syntax error\nFAIL\tpkg [build failed]\n",
			failed, []string{"a"}, mutation.Broken, nil},
		{"panic", "=== RUN   TestScenarios/local/a\n=== RUN   TestScenarios/local/b\npanic: boom\n",
			failed, []string{"a", "b"}, mutation.Caught, []string{"b (panic)"}},
		{"fatal error", "=== RUN   TestScenarios/local/a\nfatal error: concurrent map writes\n",
			failed, []string{"a"}, mutation.Caught, []string{"a (fatal error)"}},
	} {
		got, outcome, _ := mutation.Judge([]byte(tc.out), tc.err, tc.scenarios)
		if outcome != tc.want || !slices.Equal(got, tc.failed) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, outcome, got, tc.want, tc.failed)
		}
	}
}

// TestReportSaysWhatIsCaughtByChance checks that the report lists a
// defect that needs several runs, or that a --rate measurement shows
// missed in some, as caught by chance, with its rate.
func TestReportSaysWhatIsCaughtByChance(t *testing.T) {
	rep := &mutation.Report{
		Baseline: mutation.Result{Outcome: mutation.Missed},
		Results: []mutation.Result{
			{Defect: mutation.Defect{Name: "always"}, Outcome: mutation.Caught, Runs: 5, Failing: 5},
			{Defect: mutation.Defect{Name: "often"}, Outcome: mutation.Caught, Runs: 5, Failing: 3},
			{Defect: mutation.Defect{Name: "racy", Runs: 3, Chance: "2/6 runs"}, Outcome: mutation.Missed},
			{Defect: mutation.Defect{Name: "probed", Runs: 2}, Outcome: mutation.Caught},
		},
	}
	var b strings.Builder
	rep.Print(&b)
	out := b.String()
	for _, want := range []string{"caught 3/5", "caught by chance, not in every run (work left): often 3/5, racy (2/6 runs; this run: MISSED)\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "always 5/5,") || strings.Contains(out, "probed (") {
		t.Errorf("report lists a defect caught in every run as by chance:\n%s", out)
	}
	if !rep.OK() {
		t.Error("a by-chance defect's miss fails the self-test")
	}
	rep.Results[3].Outcome = mutation.Missed
	if rep.OK() {
		t.Error("a miss of a defect caught by construction passes the self-test")
	}
}

// TestReportSaysTheBaselineWasSkipped checks that a skipped baseline
// (Config.SkipBaseline) is reported as skipped, not as passed, and does
// not fail the self-test.
func TestReportSaysTheBaselineWasSkipped(t *testing.T) {
	rep := &mutation.Report{
		Baseline: mutation.Result{Outcome: mutation.Missed, Detail: mutation.BaselineSkipped},
		Results:  []mutation.Result{{Defect: mutation.Defect{Name: "d"}, Outcome: mutation.Caught}},
	}
	var b strings.Builder
	rep.Print(&b)
	if want := "baseline " + mutation.BaselineSkipped; !strings.Contains(b.String(), want) {
		t.Errorf("report lacks %q:\n%s", want, b.String())
	}
	if !rep.OK() {
		t.Error("a skipped baseline fails the self-test")
	}
}
