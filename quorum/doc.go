// Package quorum fans one call out to N nodes concurrently and returns as
// soon as the outcome is decided: when enough nodes said yes, or when so many
// said no or failed that enough yes votes can no longer come.
//
// Every node's call runs in its own goroutine under its own timeout, with a
// context that the caller's cancellation does not cut short: a call that was
// sent keeps its chance to land (and to be cleaned up after) even when the
// caller has stopped waiting. Calls still in flight when Do returns finish in
// the background within their timeout; Do itself waits for none of them.
package quorum
