package checker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
)

// renewed is a renewed hold of TTL 100ms granted at 0, valid until 90ms.
func renewed(lock int64) checker.Event {
	return checker.Event{Kind: checker.Granted, Lock: lock, Client: 1, Key: "r", Until: 90 * ms, Renewed: true, TTL: 100 * ms}
}

func at(kind checker.Kind, lock int64, t int64) checker.Event {
	return checker.Event{Kind: kind, Lock: lock, At: ms * time.Duration(t)}
}

func TestRenewalHolds(t *testing.T) {
	fail := func(t int64, obstructed bool) checker.Event {
		e := at(checker.RenewFailed, 1, t)
		e.Obstructed = obstructed
		return e
	}
	for _, tc := range []struct {
		name   string
		events []checker.Event
		want   int
	}{
		{"released, never lost", []checker.Event{renewed(1), at(checker.Released, 1, 400)}, 0},
		{"lost with no renewal failure", []checker.Event{renewed(1), at(checker.Lost, 1, 300), at(checker.Released, 1, 400)}, 1},
		{"lost, never released", []checker.Event{renewed(1), at(checker.Lost, 1, 300)}, 1},
		{"lost after the release", []checker.Event{renewed(1), at(checker.Released, 1, 200), at(checker.Lost, 1, 300)}, 0},
		{"lost after a failure for want of answers", []checker.Event{renewed(1), fail(250, true), at(checker.Lost, 1, 300)}, 0},
		{"that failure reported after the loss", []checker.Event{renewed(1), at(checker.Lost, 1, 300), fail(340, true)}, 0},
		{"lost after refusals only", []checker.Event{renewed(1), fail(250, false), at(checker.Lost, 1, 300)}, 1},
		{"the failure two TTLs too early", []checker.Event{renewed(1), fail(50, true), at(checker.Lost, 1, 300)}, 1},
		{"not renewed", []checker.Event{hold(1, "r", "", false, 0, 0, 90), at(checker.Lost, 1, 90)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checker.Check(tc.events)
			if n := r.ByInvariant()[checker.RenewalHolds]; n != tc.want {
				t.Fatalf("%d violations, want %d: %v", n, tc.want, r.Violations)
			}
		})
	}
}

func TestContextWithinUntil(t *testing.T) {
	ext := func(at, until int64) checker.Event {
		return checker.Event{Kind: checker.Extended, Lock: 1, At: ms * time.Duration(at), Until: ms * time.Duration(until)}
	}
	tol := int64(checker.ContextTolerance / ms)
	for _, tc := range []struct {
		name   string
		events []checker.Event
		want   int
	}{
		{"ended at Until", []checker.Event{renewed(1), at(checker.CtxLive, 1, 90)}, 0},
		{"ended within the tolerance", []checker.Event{renewed(1), at(checker.CtxLive, 1, 90+tol)}, 0},
		{"live past Until", []checker.Event{renewed(1), at(checker.CtxLive, 1, 91+tol)}, 1},
		{"live past Until, then released", []checker.Event{renewed(1), at(checker.CtxLive, 1, 200), at(checker.Released, 1, 200)}, 1},
		{"released before Until", []checker.Event{renewed(1), at(checker.Released, 1, 50), at(checker.CtxLive, 1, 200)}, 0},
		{"renewed in time", []checker.Event{renewed(1), ext(30, 190), at(checker.CtxLive, 1, 190)}, 0},
		{"renewed, live past the renewed Until", []checker.Event{renewed(1), ext(30, 190), at(checker.CtxLive, 1, 300)}, 1},
		{"Until lowered, context kept", []checker.Event{renewed(1), ext(30, 40), at(checker.CtxLive, 1, 90+tol)}, 1},
		{"a renewal after Until revives nothing", []checker.Event{renewed(1), ext(95, 190), at(checker.CtxLive, 1, 190)}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := checker.Check(tc.events)
			if n := r.ByInvariant()[checker.ContextWithinUntil]; n != tc.want {
				t.Fatalf("%d violations, want %d: %v", n, tc.want, r.Violations)
			}
			for _, v := range r.Violations {
				if v.Invariant == checker.ContextWithinUntil && !strings.Contains(v.Detail, "still live") {
					t.Errorf("detail %q", v.Detail)
				}
			}
		})
	}
}
