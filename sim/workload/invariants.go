package workload

import "github.com/quorumlock/quorumlock/chaos/checker"

// The simulator's own invariants, beside the chaos checker's: properties
// the chaos suite asserts in a scenario of its own (paused-client, the
// Resume workload) rather than in its checker, and which the simulator
// checks on every run.
const (
	// ValidityAtGrant: a lock is never returned with no validity left
	// (its Until not after the moment it is returned): the library counts
	// the time the round took (validity = ttl - elapsed - drift > 0).
	ValidityAtGrant checker.Invariant = "validity-at-grant"
	// ResumeReleased: a Resume of a token whose lock was released (on
	// every master, before the Resume was called) fails: Resume never
	// creates a lock.
	ResumeReleased checker.Invariant = "resume-of-released"
	// MisconfigurationAccepted: a misconfiguration is an ErrInvalid, never
	// silently weakened or read as Redis being down: New refuses Nodes
	// that cannot tell their master's process while the restart guard is
	// on, and an acquisition that failed for a misconfigured master (INFO
	// refused) matches ErrInvalid, not ErrUnavailable.
	MisconfigurationAccepted checker.Invariant = "misconfiguration-accepted"
	// LandedAfterRelease: an acquisition's state (its key, hold, reader,
	// permit) never appears on a master after its release left the
	// acquisition's tombstone there, whatever held the acquire up: the
	// tombstone refuses it for at least a minute (longer than any run),
	// unless the master lost data since.
	LandedAfterRelease checker.Invariant = "landed-after-release"
	// RemovedByAnother: a command of one acquisition (or waiter) never
	// removes live state that names another (its key, hold, reader,
	// waiting mark, queue entry) from a key the acquisition itself has
	// no live state in: only its owner's commands remove it, or its
	// expiry. Expired state may be cleaned up by anyone; an owner's
	// command (one whose identity has live state in the same key) may
	// remove what goes with it (a reentrant hash's owner with its last
	// hold); a holder record goes with its lock (any command may remove
	// the record of a holder that no longer holds the lock after it).
	RemovedByAnother checker.Invariant = "removed-by-another"
)
