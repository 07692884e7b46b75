package checker

import (
	"testing"
	"time"
)

const ms = time.Millisecond

// freeStretch against a brute force over every millisecond.
func TestFreeStretch(t *testing.T) {
	busy := []Interval{{Start: 10 * ms, End: 20 * ms}, {Start: 15 * ms, End: 30 * ms}, {Start: 45 * ms, End: 50 * ms}, {Start: 80 * ms, End: 90 * ms}}
	for _, c := range []struct{ from, to time.Duration }{
		{0, 100 * ms}, {12 * ms, 40 * ms}, {25 * ms, 46 * ms}, {50 * ms, 80 * ms}, {11 * ms, 29 * ms}, {95 * ms, 99 * ms},
	} {
		want := time.Duration(0)
		run := time.Duration(0)
		for m := c.from; m < c.to; m += ms {
			covered := false
			for _, iv := range busy {
				if iv.Start <= m && m < iv.End {
					covered = true
				}
			}
			if covered {
				run = 0
				continue
			}
			run += ms
			want = max(want, run)
		}
		if _, got := freeStretch(busy, c.from, c.to); got != want {
			t.Errorf("freeStretch [%v, %v) = %v, want %v", c.from, c.to, got, want)
		}
	}
}

// A waiter that waited while the lock lay free past the bound is starved;
// one whose wait was covered by holds, or whose key is not fair, is not.
func TestStarvation(t *testing.T) {
	fair := func(key string) bool { return key != "plain" }
	intervals := []Interval{
		{Key: "k", Lock: 1, Start: 0, End: 100 * ms},
		{Key: "k", Lock: 2, Start: 110 * ms, End: 200 * ms},
		{Key: "k", Lock: 3, Start: 700 * ms, End: 800 * ms},
	}
	events := []Event{
		{Kind: Granted, Key: "k", Lock: 2, Client: 1, Call: 50 * ms, At: 110 * ms},
		{Kind: Granted, Key: "k", Lock: 3, Client: 2, Call: 150 * ms, At: 700 * ms},
		{Kind: Attempted, Key: "k", Client: 3, Call: 20 * ms, At: 600 * ms},
		{Kind: Attempted, Key: "plain", Client: 4, Call: 0, At: 900 * ms},
	}
	vs := Starvation(events, intervals, fair, 300*ms)
	if len(vs) != 2 {
		t.Fatalf("violations %v, want 2", vs)
	}
	for _, v := range vs {
		if v.Invariant != NoStarvation || v.At != 200*ms || (v.Client != 2 && v.Client != 3) {
			t.Errorf("violation %v", v)
		}
	}
	if vs := Starvation(events, intervals, fair, 500*ms); len(vs) != 0 {
		t.Fatalf("within the bound: %v", vs)
	}
}

// A call invoked during the clients' setup may wait what is left of it on
// top of the bound; one invoked after the setup may not.
func TestStarvationAfterSetup(t *testing.T) {
	fair := func(string) bool { return true }
	events := []Event{
		{Kind: Attempted, Key: "k", Client: 1, Call: 20 * ms, At: 800 * ms},   // free 780ms: bound 300 + setup 480
		{Kind: Attempted, Key: "k", Client: 2, Call: 600 * ms, At: 1000 * ms}, // free 400ms, after the setup
	}
	vs := StarvationAfterSetup(events, nil, fair, 300*ms, 500*ms)
	if len(vs) != 1 || vs[0].Client != 2 {
		t.Fatalf("violations %v, want client 2's alone", vs)
	}
	if vs := Starvation(events, nil, fair, 300*ms); len(vs) != 2 {
		t.Fatalf("without a setup: %v, want both", vs)
	}
}
