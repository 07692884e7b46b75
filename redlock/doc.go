// Package redlock implements the Redlock distributed lock over N independent
// Redis masters.
//
// A lock is held when a quorum of the masters (by default N/2+1) granted it
// within its validity window. Acquisition sends SET key token NX PX ttl to all
// masters concurrently, each call under its own timeout, and decides as soon
// as the outcome is known: it never waits for a slow or dead master once a
// quorum has answered either way. The lock is valid for
//
//	validity = ttl - elapsed - drift,  drift = ttl*DriftFactor + 2ms
//
// and Lock.Until is start + validity, where start is the moment the attempt
// began. An attempt whose quorum arrives after its validity is used up fails.
// A failed attempt is released on every master with compare-and-delete, each
// release sent only after that master's SET has returned, under a context the
// caller's cancellation cannot cut short. Every attempt uses a fresh random
// token, so a late release of an earlier attempt never touches a later lock.
//
// A Locker is safe for concurrent use and holds no per-acquisition state; a
// *Lock is one acquisition.
//
// # What Redlock guarantees, and what it does not
//
// Mutual exclusion holds while: the client's clock is monotonic (Config.Clock
// defaults to Go's monotonic clock); the masters' clocks drift by less than
// DriftFactor; and a master that restarts either persisted every write (AOF
// with appendfsync always) or stays down for at least the longest TTL. A
// holder that is paused (GC, swap, a stopped VM) past Until may act after
// another client acquired the lock: only a fencing token checked by the
// protected resource catches that. The chaos harness in this repository
// demonstrates each of these cases.
package redlock
