package nodetest

import (
	"fmt"
	"testing"
	"time"
)

// closeRounds is how many times testClose runs a process's last steps.
const closeRounds = 20

// testClose: a process that locks, unlocks, closes its Locker, closes its
// Nodes (and their clients) and exits leaves no lock on any master. Unlock
// may return at the quorum, before the last master answered; Locker.Close
// waits for the releases still in flight, so that closing the clients
// next cuts none of them short. Each round is a subtest, whose cleanups
// close the Nodes newNode made in it: once it returned, the process is
// gone, and the masters are looked at at once, without waiting for a
// release that a live process might still send. 20 rounds, one key.
func (s *suite) testClose(t *testing.T) {
	controls := make([]*control, len(s.masters))
	for i := range controls {
		controls[i] = s.control(t, i)
	}
	k := key(t)
	for round := range closeRounds {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			l := s.newLocker(t)()
			lk, err := l.TryLock(ctx(t), k, time.Minute)
			if err != nil {
				t.Fatalf("TryLock: %v", err)
			}
			if err := lk.Unlock(ctx(t)); err != nil {
				t.Fatalf("Unlock: %v", err)
			}
			if err := l.Close(ctx(t)); err != nil {
				t.Fatalf("Locker.Close: %v", err)
			}
		})
		if t.Failed() {
			return
		}
		for i, c := range controls {
			if c.int("EXISTS", k) != 0 {
				t.Fatalf("round %d: master %d holds %s (%q, pttl %d) after the process unlocked, closed its Locker and its Nodes",
					round, i, k, c.str("GET", k), c.int("PTTL", k))
			}
		}
	}
}
