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
// token, so a late release of an earlier attempt never touches a later lock;
// Lock's next attempt waits for those releases to return (at most a node
// timeout), so that it does not find its own last key and count it as a
// refusal.
//
// A Locker is safe for concurrent use; a *Lock is one acquisition, and
// holds all of that acquisition's state (the Locker shares only its
// configuration and its per-key queues of waiting Lock calls). A release on
// a master never overtakes that master's acquire call (Unlock and Extend
// are sent to a master once its acquire returned, or, on an AsyncNode's
// pipelined connection, queued behind it at the node timeout), so an early
// Unlock cannot leave a key behind on a slow master.
//
// # Waiting
//
// Lock retries until its context ends. Lock calls of one Locker that wait
// for the same key queue up in order (first come, first served; only the
// head makes attempts, and an Unlock through the Locker hands over at
// once). Waiters in other processes are woken by release announcements:
// every release script PUBLISHes on ReleaseChannel(key), and a waiting Lock
// subscribes through every Node that is a Subscriber (*pool.Node is); the
// jittered backoff stays as the fallback. Config.DisableWakeOnRelease turns
// the subscriptions off.
//
// # Optional Node abilities
//
// Subscriber, PreparedEvaler and AsyncNode are abilities a Node may have
// beyond the Node interface; a Locker detects them by type assertion. A Node
// that wraps another must forward each one the wrapped Node has. With
// AsyncNode (as *pool.Node has) node calls complete by callback: a Lock or
// Unlock starts no goroutine per master, and a master that does not answer
// costs a pending command on its connection, not a parked goroutine.
//
// # Observing
//
// Config.Observer is told of every acquisition call (key, kind, wait,
// attempts, outcome), release (hold time), renewal, loss and failed call to
// a master. SlogObserver logs them with log/slog.
//
// # Variants
//
// With Config.AutoRenew a watchdog extends each lock until Unlock, and
// Lock.Done, Lock.Err and Lock.Context tell the holder the moment the lock
// can no longer be guaranteed; Locker.Do runs a function under a renewed
// lock. With Config.Fencing each lock carries a fencing token (Lock.Fence)
// that increases strictly from holder to holder. Locker.Reentrant and
// Locker.RWMutex give reentrant and read-write locks with the same quorum,
// validity and release rules. Locker.Semaphore admits at most K holders:
// K permits, each an ordinary lock (see Semaphore for why not a counter).
//
// # What Redlock guarantees, and what it does not
//
// Mutual exclusion holds while: the client's clock is monotonic (Config.Clock
// defaults to Go's monotonic clock); the masters' clocks drift by less than
// DriftFactor; and a master that restarts either persisted every write (AOF
// with appendfsync always) or stays down for at least the longest TTL; and
// no master evicts keys: run every master with maxmemory-policy noeviction
// (the default). A master that evicts a lock key under memory pressure lets
// a second client in, and with an allkeys-* policy it may also evict a
// fencing counter, after which tokens start again from 1. With noeviction
// a full master refuses writes instead, which only makes locks fail. A
// holder that is paused (GC, swap, a stopped VM) past Until may act after
// another client acquired the lock: only a fencing token checked by the
// protected resource catches that. The chaos harness in this repository
// demonstrates each of these cases.
package redlock
