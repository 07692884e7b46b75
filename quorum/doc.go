// Package quorum fans one call out to N nodes concurrently, counts the
// votes as they arrive, and returns as soon as the outcome is decided: when
// enough nodes said yes, or when so many said no or failed that enough yes
// votes can no longer come, or when the timeout passed.
//
// It does that one job. The node calls share one timeout, and a context
// that the caller's cancellation does not cut short: a call that was sent
// keeps its chance to land (and to be cleaned up after) even when the
// caller stopped waiting. Calls still in flight when the fan-out returns
// finish in the background, and only their caller hears of them
// (Tally.Vote reports that such a vote was late). What to do after each
// node's call (follow-up commands, reports of late failures) is the
// caller's: it sees every reply first.
//
// Do runs each node's call in a goroutine of its own; Async takes calls
// that complete by callback (a pipelined connection's reader reporting the
// reply) and starts no goroutine at all.
package quorum
