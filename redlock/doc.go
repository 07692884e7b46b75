// Package redlock implements the Redlock distributed lock over N independent
// Redis masters.
//
// A lock is held when a quorum of the masters (by default N/2+1) granted it
// within its validity window. Acquisition runs the acquire script (SET key
// token NX PX ttl, unless the attempt was released already) on all masters
// concurrently, each call under its own timeout, and decides as soon as the
// outcome is known: it never waits for a slow or dead master once a quorum
// has answered either way. The attempt succeeds when a quorum granted it
// and some validity is left,
//
//	validity = ttl - elapsed - drift > 0,  drift = ttl*DriftFactor + 2ms,
//
// and Lock.Until is start + ttl - drift (= now + validity), where start is
// the moment the attempt began: every master set the key's TTL after it.
// An attempt whose quorum arrives after its validity is used up fails.
// A failed attempt is released at once on every master whose acquire may
// have landed, under a context the caller's cancellation cannot cut short.
// Every attempt uses a fresh random token, so a late release of an earlier
// attempt never touches a later lock; Lock's next attempt waits for those
// releases to return (at most a node timeout), so that it does not find its
// own last key and count it as a refusal.
//
// # One Lock call, down and up
//
// Locker.Lock checks its input (nothing reaches Redis for bad input), then
// makes attempts (acquire.go, one retry loop for every kind). An attempt
// (attempt.go) builds one script call for all masters (call.go) and hands
// it to the fan-out (sender.go): package quorum starts the call on every
// master at once, through each master's sender, which New resolved from
// what its Node can do (its Abilities: a Node with EvalAsync completes the
// call by callback, others get a goroutine; with one master the call runs
// on the caller's goroutine). Each reply comes back up once, through one
// pipeline per master (master.go): read as a vote, a grant judged by the
// restart guard (guard.go) and confirmed durable when Config.Durability
// asks (durable.go); quorum counts it and wakes the attempt when the
// outcome is decided, and a vote that comes after that is only reported.
// The attempt computes the validity (one function) and returns the Lock,
// or releases what it may have set.
//
// # A release never leaves a late acquire behind
//
// A command may reach a master long after its caller gave up: delayed on
// the network past the node timeout, or after the connection was replaced,
// or as the EVAL sent after a NOSCRIPT. An acquire that lands after its
// release would hold the key on that master until its TTL. So every
// acquisition has an identity of its own on the masters (the attempt's
// token; a reentrant hold's id), a release that does not find it leaves a
// tombstone for it (a key with a TTL of at least a minute), and every
// acquire script refuses when its tombstone exists (variant.go). The order
// in which a Node delivers commands therefore does not matter; what a Node
// must do is little (see Node).
//
// A Locker is safe for concurrent use; a *Lock is one acquisition, and
// holds all of that acquisition's state (the Locker shares only its
// configuration and its per-key queues of waiting Lock calls).
//
// # Waiting
//
// Lock retries until its context ends. Lock calls of one Locker that wait
// for the same key queue up in order (first come, first served; only the
// head makes attempts, and an Unlock through the Locker hands over at
// once). Waiters in other processes are woken by release announcements:
// every release script PUBLISHes on ReleaseChannel(key), and a waiting Lock
// subscribes through every Node that can (Abilities.Subscribe: every Node
// of this repository); the jittered backoff stays as the fallback. Config.DisableWakeOnRelease turns
// the subscriptions off.
//
// # Errors
//
// A failed acquisition matches ErrNotAcquired, and also ErrUnavailable when
// it failed for want of answers (masters down, cut off or too slow) rather
// than because the lock is held; a failed Extend or Unlock matches
// ErrLockLost; bad input matches ErrInvalid. errors.As finds the
// *QuorumError with each master's outcome. Locker.Check is a readiness
// check of the masters.
//
// # Observing
//
// Config.Observer is told of every acquisition call (key, kind, wait,
// attempts, outcome), release (hold time), renewal, loss and failed call to
// a master, each event with the context of the call it is about; a
// NodeStateObserver is told when a master starts failing and when it
// answers again. SlogObserver logs them with log/slog.
//
// # Variants
//
// With Config.AutoRenew a watchdog extends each lock until Unlock, and
// Lock.Done, Lock.Err and Lock.Context tell the holder the moment the lock
// can no longer be guaranteed; Locker.Do runs a function under a renewed
// lock. With Config.Fencing each lock carries a fencing token (Lock.Fence)
// that increases strictly from holder to holder, also across a master's
// restart. Locker.Reentrant, Locker.RWMutex, Locker.Fair,
// Locker.Semaphore, Locker.LockMulti and Locker.Resume give reentrant,
// read-write, fair, counting, multi-key and handed-over locks with the same
// quorum, validity and release rules. Config.KeyPrefix keeps lock keys
// apart from data keys. Options (Option) override the Config for one call.
// WithMetadata keeps a holder record beside a lock of any exclusive kind,
// or a semaphore's permit (who holds it), read back by Lock.Metadata and,
// from a quorum, Locker.Holder. NewElection
// elects a leader over a fenced, renewed lock whose term is its fencing
// token (Campaign, Proclaim, Resign, Leader, Observe).
//
// # What Redlock guarantees, and what it does not
//
// Mutual exclusion holds while: the client's clock is monotonic (Config.Clock
// defaults to Go's monotonic clock); the masters' clocks drift by less than
// DriftFactor; a master that restarts comes back with its locks, or does
// not count until they expired; no master evicts lock keys (run every
// master with maxmemory-policy noeviction, the default); and no master
// fails over to a replica that lacks a lock. The library keeps the
// restart condition itself where it can: a master that persists every
// write (AOF with appendfsync always) comes back with its locks; the
// restart guard (Config.RestartGuard, guard.go), on by default, keeps the
// grants of a master that restarted from counting until every lock it may
// have forgotten expired, for every client and process, through records
// the masters keep of each other; durable grants (Config.Durability,
// durable.go) count a grant only once it is on disk, and on replicas for a
// failover. A
// holder that is paused (GC, swap, a stopped VM) past Until may act after
// another client acquired the lock: only a fencing token checked by the
// protected resource catches that. The chaos harness in this repository
// demonstrates each of these cases.
package redlock
