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
// A Resource is the protected resource: it accepts a write only when the
// writer's fencing token is at least the highest token it has seen, and
// counts the stale writes it rejects. The overlap count never depends on
// tokens.
package checker
