// Package assist lets the goroutine that waits for a callback-completed
// call read that call's reply itself, instead of being woken by the
// goroutine that would have read it: one goroutine hand-off less per round
// trip, which on a machine with few CPUs is most of a round trip's cost
// beyond the network.
//
// A Waiter (a fan-out waiting for its only call) is found through the
// context the call was started with. When the connection that carries the
// call is idle, the transport writes the call and offers the waiter a
// Reader for its reply; a waiter that accepts must call ReadReply soon, on
// its own goroutine and without holding anything the transport may need,
// since the connection's other replies wait behind that read.
package assist

import "context"

// Reader reads the reply of one call on the caller's goroutine and
// completes the call as the transport would have, or, when stop ends or
// the call's own context does first, hands the read back to the transport
// and returns. Either way it returns once, without leaving the call
// behind: the call completes exactly once.
type Reader interface {
	ReadReply(stop context.Context)
}

// Waiter is a goroutine about to wait for calls started with a context it
// made.
type Waiter interface {
	// Offer proposes that the waiter read the reply of the call started
	// with ctx itself. It reports whether the waiter accepts; it then
	// calls r.ReadReply once, promptly.
	Offer(ctx context.Context, r Reader) bool
}

// key is the context key under which a Waiter is found.
type key struct{}

// Key is what a context that carries a Waiter answers to in Value.
var Key any = key{}

// From returns the Waiter ctx carries, or nil.
func From(ctx context.Context) Waiter {
	w, _ := ctx.Value(Key).(Waiter)
	return w
}
