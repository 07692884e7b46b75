package world

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEventsInOrder: the loop's heap gives its events back by time, and
// those of one time in the order they were scheduled, whatever the order
// of the pushes and pops in between.
func TestEventsInOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var h events
	var want []*event
	var got []*event
	seq := uint64(0)
	for range 2000 {
		if len(h) > 0 && r.IntN(3) == 0 {
			got = append(got, h.pop())
			continue
		}
		seq++
		e := &event{at: int64(r.IntN(50)), seq: seq}
		h.push(e)
	}
	for len(h) > 0 {
		got = append(got, h.pop())
	}
	// Every pop returned the least of what was in the heap then: replay
	// the same pushes and pops against a sorted slice.
	r = rand.New(rand.NewPCG(1, 2))
	var pending []*event
	seq = 0
	byOrder := func(a, b *event) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return int(a.seq) - int(b.seq)
	}
	for range 2000 {
		if len(pending) > 0 && r.IntN(3) == 0 {
			slices.SortFunc(pending, byOrder)
			want = append(want, pending[0])
			pending = pending[1:]
			continue
		}
		seq++
		pending = append(pending, &event{at: int64(r.IntN(50)), seq: seq})
	}
	slices.SortFunc(pending, byOrder)
	want = append(want, pending...)
	if len(got) != len(want) {
		t.Fatalf("%d events popped, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].at != want[i].at || got[i].seq != want[i].seq {
			t.Fatalf("pop %d: event at %d seq %d, want at %d seq %d", i, got[i].at, got[i].seq, want[i].at, want[i].seq)
		}
	}
}
