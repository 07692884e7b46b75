package sim_test

import (
	"os"
	"testing"

	"github.com/quorumlock/quorumlock/sim"
	"github.com/quorumlock/quorumlock/sim/schedule"
)

// TestTestdataPass replays the schedules in testdata that catch a defect
// of the mutation self-test by construction (identity-rounding: a master's
// start taken a second too early; replica-wait-skipped: a grant counted
// whatever number of replicas acknowledged it; guard-ignores-extends: the
// guard holding a restarted master back for the longest acquire's TTL, not
// the longest Extend's; extend-lands-late: a short Extend given up at the
// stall timeout, landing after a longer one, which
// extend-unknown-resolved-on-error counts on for its whole TTL): on the
// library as it is, they pass. The other schedules there show findings
// (see the README).
func TestTestdataPass(t *testing.T) {
	for _, name := range []string{"identity-rounding", "replica-wait", "guard-extends", "extend-lands-late"} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile("testdata/" + name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			s, err := schedule.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if res := sim.Run(t, s); res.Failed() {
					t.Fatalf("%s\n%s", res.Summary(), res.Details())
				}
			}
		})
	}
}
