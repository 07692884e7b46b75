package checker

import "time"

// The records of the invariants beyond one holder: fair waiters'
// registrations and crashes, renewals and losses, lock contexts, and what
// the masters were seen to hold.

// Register records that the fair waiter of the acquire call client
// invoked at call on key was seen registered on a quorum of the masters at
// t. call must be the time the call is recorded with (GrantCall, Attempt).
func (h *History) Register(client int, key string, call, t time.Time) {
	h.add(Event{Kind: Registered, Client: client, Key: key, Call: h.Offset(call), At: h.Offset(t)})
}

// Crash records that the acquire call client invoked at call on key was
// abandoned at t without any clean-up, as by a crash.
func (h *History) Crash(client int, key string, call, t time.Time) {
	h.add(Event{Kind: Crashed, Client: client, Key: key, Call: h.Offset(call), At: h.Offset(t)})
}

// Lose records that lock ended at t other than by its release.
func (h *History) Lose(lock int64, t time.Time) {
	h.add(Event{Kind: Lost, Lock: lock, At: h.Offset(t)})
}

// RenewFail records that a renewal of lock failed at t, for want of
// answers when obstructed is set; detail says how.
func (h *History) RenewFail(lock int64, t time.Time, obstructed bool, detail string) {
	h.add(Event{Kind: RenewFailed, Lock: lock, At: h.Offset(t), Obstructed: obstructed, Detail: detail})
}

// CtxLive records that the context of lock was still live at t.
func (h *History) CtxLive(lock int64, t time.Time) {
	h.add(Event{Kind: CtxLive, Lock: lock, At: h.Offset(t)})
}

// Coexist records that at t a master held a live reader of key beside
// its writer, as detail describes.
func (h *History) Coexist(client int, key string, t time.Time, detail string) {
	h.add(Event{Kind: Coexisted, Client: client, Key: key, At: h.Offset(t), Detail: detail})
}

// Misreply records that a call of client on key got, at t, a reply that
// was not its own, as detail describes.
func (h *History) Misreply(client int, key string, t time.Time, detail string) {
	h.add(Event{Kind: OutOfStep, Client: client, Key: key, At: h.Offset(t), Detail: detail})
}

// Remain records that a call of client on key, returned at t, left what
// detail describes on a master where none of its releases failed.
func (h *History) Remain(client int, key string, t time.Time, detail string) {
	h.add(Event{Kind: Remained, Client: client, Key: key, At: h.Offset(t), Detail: detail})
}
