package redlock

import "context"

// Node is one independent Redis master. *pool.Node satisfies it; so can an
// adapter for any other Redis client.
//
// A Node may have optional abilities, exported interfaces that a Locker
// detects by type assertion, the way io.Copy detects io.WriterTo:
// Subscriber (wake on release), PreparedEvaler (a script call whose
// argument list is built once per fan-out) and AsyncNode (calls that
// complete by callback, without a goroutine per node and call). A Node
// that wraps another Node
// (to count, trace or fault its calls) must forward each ability the
// wrapped Node has, or the Locker silently does without it.
type Node interface {
	// Addr names the master; it must be unique within a Locker.
	Addr() string
	// Do sends one command. A nil reply must come back as nil, a status
	// reply as a string, an integer as int64, and a Redis error reply as
	// an error. It must return when ctx ends.
	Do(ctx context.Context, cmd string, args ...any) (any, error)
	// Eval runs the Lua script src, whose SHA1 hex digest is hash (EVALSHA
	// with an EVAL fallback), with the same reply conventions as Do.
	Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error)
}

// Subscriber is an optional Node ability: wake on release. A waiting
// Locker.Lock subscribes to ReleaseChannel(key) on every Node that is a
// Subscriber, and tries again as soon as a master announces a release
// instead of only after its backoff (unless Config.DisableWakeOnRelease).
// *pool.Node implements it over one shared pub/sub connection. A wrapper
// Node must forward it.
type Subscriber interface {
	// Subscribe registers ch to receive a non-blocking send for every
	// message published on channel, until unsubscribe is called. It
	// returns when ctx ends.
	Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error)
}

// PreparedEvaler is an optional Node ability: EVALSHA with an argument list
// built once per fan-out (hash, number of keys, keys..., args...) instead of
// once per Node. It must behave as Eval does with the same script,
// including the EVAL fallback (src is the script) and the reply
// conventions. *pool.Node implements it. A wrapper Node must forward it.
type PreparedEvaler interface {
	EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error)
}

// AsyncNode is an optional Node ability: calls that complete by callback.
// A Locker whose Node is an AsyncNode starts every call to it without a
// goroutine and counts its vote when done runs, typically on the reader
// goroutine of a pipelined connection; a master that does not answer then
// costs a pending call, not a parked goroutine. Other Nodes get a goroutine
// per call. *pool.Node implements it. A wrapper Node must forward it (or
// not implement it at all, so that its Do and Eval are called).
//
// Each method returns at once and runs done.Complete exactly once, with the reply
// and error that Do (or PreparedEvaler.EvalPrepared, including the EVAL
// fallback) would have returned. done may run on any goroutine, also on the
// caller's before the method returns. It does not block, and an
// implementation must not block in it either: what done does may send
// further calls to the same Node. done must run eventually, also for a
// master that never answers (an implementation bounds a pending call, as
// pool.Config.StallTimeout does, and completes it at its own Close): the
// Locker sends a master its release only after that master's acquire call
// has completed, or, when InOrder reports true, once that call has been
// pending for the node timeout: calls then reach the master in the order
// they were made (as on one pipelined connection), so that a release made
// then is executed after the acquire still pending ahead of it. ctx bounds waiting
// before the command is sent (for a connection, say); a command that was
// sent is never sent again.
type AsyncNode interface {
	DoAsync(ctx context.Context, cmd string, args []any, done Completion)
	EvalPreparedAsync(ctx context.Context, src string, cmdArgs []any, done Completion)
	// InOrder reports whether the Node's calls reach the master in the
	// order they were made (one pipelined connection). Only then does the
	// Locker send a release at the node timeout, behind an acquire still
	// pending; otherwise it waits until that acquire completed.
	InOrder() bool
}

// Completion receives the outcome of one AsyncNode call: Complete(reply,
// err) runs exactly once. It is an interface, not a func, so that a caller
// can complete many calls through values it allocated once (a fan-out
// passes a pointer into an array of them); CompletionFunc adapts a func.
// It is an alias of an unnamed interface type, so that an implementation
// in a package that does not import redlock (package pool) has the very
// same method signatures.
type Completion = interface {
	Complete(reply any, err error)
}

// CompletionFunc is a func used as a Completion.
type CompletionFunc func(reply any, err error)

// Complete calls f(reply, err).
func (f CompletionFunc) Complete(reply any, err error) { f(reply, err) }
