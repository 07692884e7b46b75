package checker_test

import (
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

// A fair waiter's call: client c called at call (ms) and was registered at
// reg; it was granted at at (granted) or gave up then.
func fairCall(c int, call, reg, at int64, granted bool) []checker.Event {
	e := checker.Event{Kind: checker.Attempted, Client: c, Key: "f", Call: ms * time.Duration(call), At: ms * time.Duration(at), Waits: true}
	if granted {
		e.Kind, e.Lock, e.Until = checker.Granted, int64(c), e.At+100*ms
	}
	r := checker.Event{Kind: checker.Registered, Client: c, Key: "f", Call: e.Call, At: ms * time.Duration(reg)}
	return []checker.Event{r, e}
}

func TestOutOfOrder(t *testing.T) {
	join := func(ess ...[]checker.Event) []checker.Event {
		var out []checker.Event
		for _, es := range ess {
			out = append(out, es...)
		}
		return out
	}
	crash := func(c int, call, at int64) checker.Event {
		return checker.Event{Kind: checker.Crashed, Client: c, Key: "f", Call: ms * time.Duration(call), At: ms * time.Duration(at)}
	}
	for _, tc := range []struct {
		name   string
		events []checker.Event
		want   int
	}{
		{"in order", join(fairCall(1, 0, 5, 100, true), fairCall(2, 10, 15, 200, true), fairCall(3, 20, 25, 300, true)), 0},
		{"a later caller served first", join(fairCall(1, 0, 5, 200, true), fairCall(2, 10, 15, 100, true)), 1},
		{"two served before the first", join(fairCall(1, 0, 5, 300, true), fairCall(2, 10, 15, 100, true), fairCall(3, 20, 25, 200, true)), 2},
		// Client 2 called before client 1 was seen registered: their
		// tickets may come in either order.
		{"called before the registration", join(fairCall(1, 0, 50, 200, true), fairCall(2, 10, 60, 100, true)), 0},
		{"served after the first gave up", join(fairCall(1, 0, 5, 100, false), fairCall(2, 10, 15, 150, true)), 0},
		{"served before the first gave up", join(fairCall(1, 0, 5, 300, false), fairCall(2, 10, 15, 150, true)), 1},
		{"served after the first crashed", append(join(fairCall(1, 0, 5, 300, false), fairCall(2, 10, 15, 150, true)), crash(1, 0, 120)), 0},
		{"served before the first crashed", append(join(fairCall(1, 0, 5, 300, false), fairCall(2, 10, 15, 150, true)), crash(1, 0, 160)), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := checker.OutOfOrder(tc.events)
			if len(vs) != tc.want {
				t.Fatalf("violations %v, want %d", vs, tc.want)
			}
			for _, v := range vs {
				if v.Invariant != checker.FairOrder || v.Key != "f" {
					t.Errorf("violation %v", v)
				}
			}
		})
	}
	// A TryLock (Waits unset) is no waiter: a later call may pass it.
	try := join(fairCall(1, 0, 5, 300, false), fairCall(2, 10, 15, 150, true))
	try[1].Waits = false
	if vs := checker.OutOfOrder(try); len(vs) != 0 {
		t.Errorf("a TryLock counted as a waiter: %v", vs)
	}
	// A waiter whose context ended gave up then, whenever it returned.
	late := join(fairCall(1, 0, 5, 300, false), fairCall(2, 10, 15, 150, true))
	late[1].GiveUp = 140 * ms
	if vs := checker.OutOfOrder(late); len(vs) != 0 {
		t.Errorf("served after the first's context ended: %v", vs)
	}
}
