package redlock_test

import (
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

func TestZZAllocs(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		_, nodes := cluster(t, n)
		l := newLocker(t, asNodes(nodes), redlock.Config{})
		cycle := func() {
			lk, err := l.Lock(t.Context(), "k", 8*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if err := lk.Unlock(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for range 100 {
			cycle()
		}
		t.Logf("N=%d allocs/cycle %.1f", n, testing.AllocsPerRun(500, cycle))
	}
}
