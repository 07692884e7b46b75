package redlock

import (
	"context"
	"time"
)

// Observer is told what a Locker does: every acquisition call, release,
// renewal, loss and failed call to a master (Config.Observer). Its methods
// run on the caller's goroutine or on one of the library's (a failure that
// comes after the call returned is told from a goroutine that tells such
// failures one after the other, never from a connection's reader): keep
// them fast and safe for concurrent use. Embed NopObserver to implement
// only some of them.
type Observer interface {
	// Acquire follows every acquisition call (Lock, TryLock and their
	// Reentrant and RWMutex forms, and the Lock of Locker.Do), success or
	// not.
	Acquire(AcquireEvent)
	// Release follows every Unlock.
	Release(ReleaseEvent)
	// Renew follows every Extend, a manual one or the auto-renewal's.
	Renew(RenewEvent)
	// Lost is told when a held lock ends other than by Unlock: its
	// validity passed, or a renewal found it gone.
	Lost(LostEvent)
	// NodeError is told of every failed call to a master: what
	// Config.OnNodeError gets.
	NodeError(NodeErrorEvent)
}

// Every event carries the context of the call it is about (Context): the
// acquisition call's for Acquire, and for the Renew and Lost of its
// auto-renewal; the Extend's, the Unlock's; a failed master call's
// operation's. It keeps the call's values (a trace span, a request id)
// but not its cancellation, so that an observer can make a span a child of
// the request's, or log with the request's trace id.

// NodeStateObserver is an optional Observer ability: told when a master
// starts failing (a first failed call after answered ones) and when it
// answers again, instead of, or beside, every failed call (NodeError). A
// Locker detects it once, in New. SlogObserver has it.
type NodeStateObserver interface {
	NodeState(NodeStateEvent)
}

// NodeStateEvent tells that a master went down or came back.
type NodeStateEvent struct {
	Addr string // the master's Node.Addr
	Up   bool   // it answers again; false: it failed
	Err  error  // the failure, when !Up
	ctx  context.Context
}

// Context returns the context of the call that saw the change.
func (e NodeStateEvent) Context() context.Context { return orBackground(e.ctx) }

// orBackground is ctx, or context.Background() for nil.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// Kinds of lock, as AcquireEvent.Kind and the other events name them.
const (
	KindLock      = "lock"      // Locker.Lock and TryLock without fencing
	KindFenced    = "fenced"    // Locker.Lock and TryLock with Config.Fencing
	KindReentrant = "reentrant" // Reentrant.Lock and TryLock
	KindRead      = "read"      // RWMutex.RLock and TryRLock
	KindWrite     = "write"     // RWMutex.Lock and TryLock
	KindFair      = "fair"      // Fair.Lock and TryLock
	KindSemaphore = "semaphore" // Semaphore.Acquire and TryAcquire, and their locks
	KindMulti     = "multi"     // Locker.LockMulti and TryLockMulti
)

// AcquireEvent describes one acquisition call.
type AcquireEvent struct {
	Key      string
	Kind     string        // KindLock, KindFenced, ...
	Wait     time.Duration // from the call until it returned
	Attempts int           // rounds sent to the masters; 0 when none was
	Err      error         // nil on success
	ctx      context.Context
}

// Context returns the context of the call the event is about, without its
// cancellation (context.Background() when there is none).
func (e AcquireEvent) Context() context.Context { return orBackground(e.ctx) }

// ReleaseEvent describes one Unlock.
type ReleaseEvent struct {
	Key  string
	Kind string
	Held time.Duration // from the grant to the Unlock call
	Err  error         // Unlock's error
	ctx  context.Context
}

// Context returns the context of the call the event is about, without its
// cancellation (context.Background() when there is none).
func (e ReleaseEvent) Context() context.Context { return orBackground(e.ctx) }

// RenewEvent describes one Extend.
type RenewEvent struct {
	Key   string
	Kind  string
	Auto  bool      // the auto-renewal's, not a manual Extend
	Until time.Time // the lock's Until afterwards
	Err   error     // Extend's error
	ctx   context.Context
}

// Context returns the context of the call the event is about, without its
// cancellation (context.Background() when there is none).
func (e RenewEvent) Context() context.Context { return orBackground(e.ctx) }

// LostEvent describes a held lock that ended other than by Unlock.
type LostEvent struct {
	Key   string
	Kind  string
	Cause error // why; it matches ErrLockLost
	ctx   context.Context
}

// Context returns the context of the call the event is about, without its
// cancellation (context.Background() when there is none).
func (e LostEvent) Context() context.Context { return orBackground(e.ctx) }

// NodeErrorEvent describes one failed call to a master.
type NodeErrorEvent struct {
	Op   string // "lock", "extend", "unlock" or "release"
	Addr string // the master's Node.Addr
	Err  error
	ctx  context.Context
}

// Context returns the context of the call the event is about, without its
// cancellation (context.Background() when there is none).
func (e NodeErrorEvent) Context() context.Context { return orBackground(e.ctx) }

// NopObserver implements Observer with methods that do nothing. Embed it
// in an Observer that needs only some of the events.
type NopObserver struct{}

// Acquire does nothing.
func (NopObserver) Acquire(AcquireEvent) {}

// Release does nothing.
func (NopObserver) Release(ReleaseEvent) {}

// Renew does nothing.
func (NopObserver) Renew(RenewEvent) {}

// Lost does nothing.
func (NopObserver) Lost(LostEvent) {}

// NodeError does nothing.
func (NopObserver) NodeError(NodeErrorEvent) {}
