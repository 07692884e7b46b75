package linearize_test

import (
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/linearize"
)

// Both checkers judge one recorded history through FromHistory: key "a"
// held by two clients at once is illegal to both, key "b" held in turn
// (and refused once) is legal to both, and they agree.
func TestSecondOpinionAgreesOnARecordedHistory(t *testing.T) {
	const ms = time.Millisecond
	events := []checker.Event{
		{Kind: checker.Granted, Lock: 1, Client: 0, Key: "a", Call: 0, At: 1 * ms, Until: 100 * ms},
		{Kind: checker.Granted, Lock: 2, Client: 1, Key: "a", Call: 10 * ms, At: 20 * ms, Until: 120 * ms},
		{Kind: checker.Released, Lock: 1, At: 50 * ms},
		{Kind: checker.Released, Lock: 2, At: 60 * ms},
		{Kind: checker.Granted, Lock: 3, Client: 0, Key: "b", Call: 0, At: 1 * ms, Until: 100 * ms},
		{Kind: checker.Attempted, Lock: 4, Client: 1, Key: "b", Call: 5 * ms, At: 6 * ms, Outcome: checker.Refused},
		{Kind: checker.Released, Lock: 3, At: 30 * ms},
		{Kind: checker.Granted, Lock: 5, Client: 1, Key: "b", Call: 31 * ms, At: 32 * ms, Until: 130 * ms},
		{Kind: checker.Released, Lock: 5, At: 70 * ms},
	}
	c := checker.Check(events)
	if len(c.Overlaps) != 1 || c.Overlaps[0].Key != "a" {
		t.Fatalf("interval checker: overlaps %v, want one on a", c.Overlaps)
	}
	ops := linearize.FromHistory(events, c)
	if len(ops) != len(events) {
		t.Fatalf("FromHistory made %d ops of %d events, want one each", len(ops), len(events))
	}
	verdict, agree, err := linearize.SecondOpinion(events, c, linearize.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !agree || verdict != "illegal (keys a)" {
		t.Fatalf("SecondOpinion = %q, agree %t; want illegal on a only, agreeing", verdict, agree)
	}
}
