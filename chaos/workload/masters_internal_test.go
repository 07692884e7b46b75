package workload

import (
	"testing"
	"time"
)

// A master that answers "not held" late (it was paused, and ran the read
// after the key expired) says nothing of the time before its answer: the
// quorum's expiry must not be dated back to when the read was sent.
func TestQuorumExpiryDatesALateGoneByItsAnswer(t *testing.T) {
	sent := time.Now()
	rs := []reading{
		{known: true, held: true, left: 100 * time.Millisecond, at: sent.Add(time.Millisecond)},
		{known: true, held: false, at: sent.Add(120 * time.Millisecond)}, // paused, answered late
		{known: true, held: false, at: sent.Add(time.Millisecond)},
	}
	if got, want := quorumExpiry(rs, sent, 2), sent.Add(102*time.Millisecond); !got.Equal(want) {
		t.Errorf("quorum expiry %v after sent, want %v", got.Sub(sent), want.Sub(sent))
	}
	// Two prompt "gone" answers: fewer than a quorum hold it from the
	// later of them on.
	rs[1].at = sent.Add(2 * time.Millisecond)
	if got, want := quorumExpiry(rs, sent, 2), sent.Add(2*time.Millisecond); !got.Equal(want) {
		t.Errorf("quorum expiry %v after sent, want %v", got.Sub(sent), want.Sub(sent))
	}
	// A master that did not answer counts as holding it for ever.
	rs[1], rs[2] = reading{}, reading{}
	if got := quorumExpiry(rs, sent, 2); got.Sub(sent) < time.Hour {
		t.Errorf("quorum expiry %v after sent with two masters unknown, want for ever", got.Sub(sent))
	}
}
