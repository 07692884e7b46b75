// Package checker decides whether a run of the chaos harness kept mutual
// exclusion, and shows what a fencing token buys when it did not.
//
// Every granted lock is recorded as events on one monotonic timeline (offsets
// from a common base time): when it was granted, the end of its guaranteed
// validity (Lock.Until), and when its holder began to release it. Its
// interval is [granted, min(until, released)), half-open: a holder that
// releases at t and a next holder granted at t do not overlap. Mutual
// exclusion held if and only if no two intervals of the same key overlap;
// Check finds every overlapping pair. Events may arrive in any order.
//
// Check also verifies what users rely on beyond one holder (invariants.go
// lists them): Until within the masters' expiry, no key left, fences that
// increase, at most K holders of a semaphore, nothing left on any master
// by a failed call, no reader beside a writer, renewed locks that are not
// lost while their renewal gets through, and lock contexts that end by
// Until. OutOfOrder checks a fair lock's order of service, and Starvation
// that a fair lock does not lie free while a waiter waits; a scenario
// calls them for its fair keys. CheckElection judges a leader election's
// history (election.go): one leader per term, terms that increase, fenced
// actions, quorum reads, observers in order that skip no leader, and
// leaders replaced in time.
//
// A Resource is the protected resource: it accepts a write only when the
// writer's fencing token is at least the highest token it has seen, and
// counts the stale writes it rejects. The overlap count never depends on
// tokens.
package checker
