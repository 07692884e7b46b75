package workload

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestDrawEndIsReplayable checks that the points at which contexts end are
// drawn from the seed alone, within bounds, with about the share asked.
func TestDrawEndIsReplayable(t *testing.T) {
	const (
		n      = 10000
		p      = 0.25
		within = 400 * time.Millisecond
	)
	a, b := rand.New(rand.NewPCG(7, 1)), rand.New(rand.NewPCG(7, 1))
	ends := 0
	for range n {
		at1, e1 := drawEnd(a, p, within)
		at2, e2 := drawEnd(b, p, within)
		if at1 != at2 || e1 != e2 {
			t.Fatalf("one seed, two draws: %v %t and %v %t", at1, e1, at2, e2)
		}
		if e1 {
			ends++
			if at1 < 0 || at1 >= within {
				t.Fatalf("point %v outside [0, %v)", at1, within)
			}
		} else if at1 != 0 {
			t.Fatalf("a context that does not end has a point %v", at1)
		}
	}
	if share := float64(ends) / n; share < p-0.03 || share > p+0.03 {
		t.Errorf("%.3f of the draws end, want about %v", share, p)
	}
	if _, ends := drawEnd(a, 1, 0); ends {
		t.Error("a draw within 0 ends")
	}
}
