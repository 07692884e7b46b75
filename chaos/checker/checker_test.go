package checker_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

const ms = time.Millisecond

// grant and release build hand-made histories.
func grant(lock int64, key string, at, until time.Duration) checker.Event {
	return checker.Event{Kind: checker.Granted, Lock: lock, Client: int(lock), Key: key, Token: lock, At: at, Until: until}
}

func release(lock int64, at time.Duration) checker.Event {
	return checker.Event{Kind: checker.Released, Lock: lock, At: at}
}

// pairs lists the overlapping pairs as "A-B" lock ids.
func pairs(r checker.Result) []string {
	var p []string
	for _, o := range r.Overlaps {
		p = append(p, fmt.Sprintf("%d-%d", o.A.Lock, o.B.Lock))
	}
	return p
}

func TestCheckHandMade(t *testing.T) {
	for _, tc := range []struct {
		name   string
		events []checker.Event
		want   []string // overlapping pairs
	}{
		{"empty", nil, nil},
		{"sequential", []checker.Event{
			grant(1, "k", 0, 100*ms), release(1, 10*ms),
			grant(2, "k", 20*ms, 120*ms), release(2, 30*ms),
		}, nil},
		{"overlap", []checker.Event{
			grant(1, "k", 0, 100*ms), release(1, 50*ms),
			grant(2, "k", 40*ms, 140*ms), release(2, 60*ms),
		}, []string{"1-2"}},
		{"touching at release", []checker.Event{
			grant(1, "k", 0, 100*ms), release(1, 50*ms),
			grant(2, "k", 50*ms, 150*ms),
		}, nil},
		{"touching at until", []checker.Event{
			grant(1, "k", 0, 50*ms),
			grant(2, "k", 50*ms, 150*ms),
		}, nil},
		{"one nanosecond of overlap", []checker.Event{
			grant(1, "k", 0, 50*ms),
			grant(2, "k", 50*ms-1, 150*ms),
		}, []string{"1-2"}},
		{"until bounds a late release", []checker.Event{
			grant(1, "k", 0, 50*ms), release(1, 500*ms), // the holder was paused past Until
			grant(2, "k", 60*ms, 150*ms), release(2, 70*ms),
		}, nil},
		{"nesting", []checker.Event{
			grant(1, "k", 0, 100*ms),
			grant(2, "k", 10*ms, 20*ms),
			grant(3, "k", 30*ms, 40*ms),
		}, []string{"1-2", "1-3"}},
		{"three at once", []checker.Event{
			grant(1, "k", 0, 100*ms),
			grant(2, "k", 10*ms, 100*ms),
			grant(3, "k", 20*ms, 100*ms),
		}, []string{"1-2", "1-3", "2-3"}},
		{"different keys never overlap", []checker.Event{
			grant(1, "a", 0, 100*ms),
			grant(2, "b", 0, 100*ms),
		}, nil},
		{"records out of order", []checker.Event{
			release(2, 60*ms), grant(2, "k", 40*ms, 140*ms),
			release(1, 50*ms), grant(1, "k", 0, 100*ms),
		}, []string{"1-2"}},
		{"release recorded before its grant, no overlap", []checker.Event{
			release(1, 10*ms), grant(2, "k", 20*ms, 100*ms), grant(1, "k", 0, 100*ms),
		}, nil},
		{"first of two releases counts", []checker.Event{
			grant(1, "k", 0, 100*ms), release(1, 80*ms), release(1, 10*ms),
			grant(2, "k", 20*ms, 100*ms),
		}, nil},
		{"same start", []checker.Event{
			grant(2, "k", 10*ms, 20*ms),
			grant(1, "k", 10*ms, 20*ms),
		}, []string{"1-2"}},
		{"empty interval overlaps nothing", []checker.Event{
			grant(1, "k", 0, 100*ms),
			grant(2, "k", 10*ms, 10*ms),
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checker.Check(tc.events)
			if got := pairs(r); !slices.Equal(got, tc.want) {
				t.Errorf("overlaps = %v, want %v", got, tc.want)
			}
			if r.Safe() != (len(tc.want) == 0) {
				t.Errorf("Safe() = %t with overlaps %v", r.Safe(), tc.want)
			}
		})
	}
}

func TestCheckIntervals(t *testing.T) {
	r := checker.Check([]checker.Event{
		release(1, 30*ms), grant(1, "k", 10*ms, 100*ms),
		grant(2, "k", 200*ms, 300*ms), release(2, 400*ms),
		release(9, 5*ms),
	})
	want := []checker.Interval{
		{Lock: 1, Client: 1, Key: "k", Token: 1, Start: 10 * ms, End: 30 * ms, Released: true},
		{Lock: 2, Client: 2, Key: "k", Token: 2, Start: 200 * ms, End: 300 * ms, Released: false},
	}
	if !slices.Equal(r.Intervals, want) {
		t.Errorf("intervals = %v, want %v", r.Intervals, want)
	}
	if r.Orphans != 1 {
		t.Errorf("orphans = %d, want 1", r.Orphans)
	}
	o := checker.Check([]checker.Event{grant(1, "k", 0, 100*ms), grant(2, "k", 40*ms, 140*ms)}).Overlaps
	if len(o) != 1 || o[0].From() != 40*ms || o[0].To() != 100*ms {
		t.Errorf("overlap = %+v, want one from 40ms to 100ms", o)
	}
}

// reference is the brute-force checker: every pair of the same key, compared
// directly.
func reference(events []checker.Event) map[[2]int64]bool {
	type iv struct {
		key        string
		start, end time.Duration
	}
	ivs := map[int64]*iv{}
	for _, e := range events {
		if e.Kind == checker.Granted {
			ivs[e.Lock] = &iv{e.Key, e.At, e.Until}
		}
	}
	for _, e := range events {
		if e.Kind == checker.Released && ivs[e.Lock] != nil && e.At < ivs[e.Lock].end {
			ivs[e.Lock].end = e.At
		}
	}
	got := map[[2]int64]bool{}
	for a, x := range ivs {
		for b, y := range ivs {
			if a < b && x.key == y.key && max(x.start, y.start) < min(x.end, y.end) {
				got[[2]int64{a, b}] = true
			}
		}
	}
	return got
}

func TestCheckAgainstReference(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for round := range 2000 {
		n := rng.IntN(30)
		var events []checker.Event
		for id := int64(1); id <= int64(n); id++ {
			// Coarse times make ties and touching intervals common.
			start := time.Duration(rng.IntN(50)) * ms
			until := start + time.Duration(rng.IntN(20))*ms
			events = append(events, grant(id, string(rune('a'+rng.IntN(3))), start, until))
			for range rng.IntN(3) {
				events = append(events, release(id, start+time.Duration(rng.IntN(25))*ms))
			}
		}
		rng.Shuffle(len(events), func(i, j int) { events[i], events[j] = events[j], events[i] })

		want := reference(events)
		r := checker.Check(events)
		got := map[[2]int64]bool{}
		for _, o := range r.Overlaps {
			if o.A.Key != o.B.Key || o.A.Start > o.B.Start {
				t.Fatalf("round %d: malformed overlap %+v", round, o)
			}
			p := [2]int64{min(o.A.Lock, o.B.Lock), max(o.A.Lock, o.B.Lock)}
			if got[p] {
				t.Fatalf("round %d: pair %v reported twice", round, p)
			}
			got[p] = true
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d overlaps, reference %d\nevents %v", round, len(got), len(want), events)
		}
		for p := range want {
			if !got[p] {
				t.Fatalf("round %d: missed overlap %v\nevents %v", round, p, events)
			}
		}
		if len(r.Intervals) != n {
			t.Fatalf("round %d: %d intervals for %d grants", round, len(r.Intervals), n)
		}
	}
}

func TestHistory(t *testing.T) {
	base := time.Now()
	h := checker.NewHistory(base)
	done := make(chan struct{})
	for c := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 100 {
				at := base.Add(time.Duration(c*1000+i*10) * ms)
				id := h.Grant(c, fmt.Sprint("k", c), int64(i), at, at.Add(5*ms))
				h.Release(id, at.Add(ms))
			}
		}()
	}
	for range 4 {
		<-done
	}
	if h.Grants() != 400 {
		t.Errorf("Grants() = %d, want 400", h.Grants())
	}
	r := checker.Check(h.Events())
	if len(r.Intervals) != 400 || !r.Safe() || r.Orphans != 0 {
		t.Errorf("%d intervals, %d overlaps, %d orphans", len(r.Intervals), len(r.Overlaps), r.Orphans)
	}
	for _, iv := range r.Intervals {
		if iv.End-iv.Start != ms || !iv.Released {
			t.Fatalf("interval %v: want 1ms, released", iv)
		}
	}
}

func TestResourceRejectsStaleTokens(t *testing.T) {
	var r checker.Resource
	steps := []struct {
		token int64
		want  bool
	}{
		{1, true}, {1, true}, // one holder writes twice
		{3, true},
		{2, false}, // a stale holder
		{3, true},
		{0, false},
		{4, true},
	}
	for i, s := range steps {
		if got := r.Write(0, s.token, time.Duration(i)); got != s.want {
			t.Errorf("write %d with token %d: accepted %t, want %t", i, s.token, got, s.want)
		}
	}
	if r.Rejected() != 2 {
		t.Errorf("Rejected() = %d, want 2", r.Rejected())
	}
	if w, rej := r.Counts(); w != len(steps) || rej != 2 {
		t.Errorf("Counts() = %d, %d; want %d, 2", w, rej, len(steps))
	}
	if w := r.Writes(); len(w) != len(steps) || w[3].Accepted || w[3].Token != 2 {
		t.Errorf("Writes() = %+v", w)
	}
}
