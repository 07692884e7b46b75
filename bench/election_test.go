package bench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/bench"
	"go.uber.org/goleak"
)

// TestElectionShort runs the election measurement with a few changes per N
// and checks its structure: a row per N, each change timed and each
// notification delivered, and the table names every N. It asserts nothing
// about speed.
func TestElectionShort(t *testing.T) {
	defer goleak.VerifyNone(t)
	o := bench.ShortElectionOptions()
	var log strings.Builder
	o.Log = &log
	r, err := bench.Election(context.Background(), o)
	if err != nil {
		t.Fatalf("Election: %v\n%s", err, log.String())
	}
	if len(r.Rows) != 3 {
		t.Fatalf("%d rows, want 3 (N = 1, 3, 5): %+v", len(r.Rows), r.Rows)
	}
	for i, x := range r.Rows {
		if want := []int{1, 3, 5}[i]; x.Nodes != want {
			t.Errorf("row %d is N=%d, want %d", i, x.Nodes, want)
		}
		if x.Errors != 0 || x.Missed != 0 {
			t.Errorf("N=%d: %d errors (%s), %d missed: want none", x.Nodes, x.Errors, x.FirstError, x.Missed)
		}
		if x.Change.Count != int64(r.Options.Changes) || x.Campaign.Count != x.Change.Count || x.Proclaim.Count != x.Change.Count {
			t.Errorf("N=%d: %d changes, %d and %d notifications timed, want %d each", x.Nodes,
				x.Change.Count, x.Campaign.Count, x.Proclaim.Count, r.Options.Changes)
		}
	}
	var b strings.Builder
	bench.PrintElection(&b, r)
	for _, n := range []string{"\n  1 ", "\n  3 ", "\n  5 "} {
		if !strings.Contains(b.String(), n) {
			t.Errorf("table has no row %q:\n%s", strings.TrimSpace(n), b.String())
		}
	}
}
