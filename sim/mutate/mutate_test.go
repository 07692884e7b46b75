package mutate_test

import (
	"context"
	"os"
	"testing"

	"github.com/quorumlock/quorumlock/chaos/mutation"
	"github.com/quorumlock/quorumlock/sim/mutate"
)

func TestInScope(t *testing.T) {
	for _, tt := range []struct {
		files []string
		want  bool
	}{
		{[]string{"redlock/scripts/release.lua"}, true},
		{[]string{"redlock/extend.go", "quorum/quorum.go"}, true},
		{[]string{"pool/call.go", "redlock/retry.go"}, false},
		{[]string{"cmd/redlock/guardian.go"}, false},
		{[]string{"redlock/election_observe.go"}, false},
		{[]string{"redlock/holder.go"}, false},
		{nil, false},
	} {
		var d mutation.Defect
		for _, f := range tt.files {
			d.Edits = append(d.Edits, mutation.Edit{File: f})
		}
		if got := mutate.InScope(d); got != tt.want {
			t.Errorf("InScope(%v) = %v, want %v", tt.files, got, tt.want)
		}
	}
}

// TestDefectsApply checks that every defect the simulator runs applies to
// this tree: a stale anchor must fail loudly here, not test nothing.
func TestDefectsApply(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := mutation.RepoRoot(context.Background(), wd)
	if err != nil {
		t.Skip("not in a git working tree:", err)
	}
	seen := map[string]bool{}
	for _, d := range mutate.Defects(root) {
		if seen[d.Name] {
			t.Errorf("defect %s listed twice", d.Name)
		}
		seen[d.Name] = true
		if err := d.Check(root); err != nil {
			t.Errorf("%v", err)
		}
	}
	if len(seen) < 30 {
		t.Errorf("%d defects, want the chaos suite's in scope and the simulator's own", len(seen))
	}
}
