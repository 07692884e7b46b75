// Package quorum fans one call out to N nodes concurrently and returns as
// soon as the outcome is decided: when enough nodes said yes, or when so many
// said no or failed that enough yes votes can no longer come.
//
// The node calls share one timeout, and a context that the caller's
// cancellation does not cut short: a call that was sent keeps its chance to
// land (and to be cleaned up after) even when the caller has stopped
// waiting. Calls still in flight when the fan-out returns finish in the
// background; it waits for none of them.
//
// Do runs each node's call in a goroutine of its own; Async takes calls
// that complete by callback (a pipelined connection's reader reporting the
// reply) and starts no goroutine at all.
package quorum
