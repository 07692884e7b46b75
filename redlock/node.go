package redlock

import "context"

// Node is one independent Redis master. *pool.Node satisfies it; so can an
// adapter for any other Redis client.
//
// A Node may have optional abilities, exported interfaces that a Locker
// detects once, in New, the way io.Copy detects io.WriterTo: Subscriber
// (wake on release), PreparedEvaler (a script call whose argument list is
// built once per fan-out) and AsyncNode (calls that complete by callback,
// without a goroutine per node and call). A Node that wraps another Node
// (to count, trace or fault its calls) must forward each ability the
// wrapped Node has, or the Locker silently does without it.
//
// What a Node must guarantee for the locks' safety is little: it sends a
// command at most once (a lost reply is a failed call, never a reason to
// send again), it counts an error reply as an error, and a script that the
// master answers NOSCRIPT goes again as EVAL even when its caller stopped
// waiting (a release must land also when it was late). The order of
// commands does not matter: a release that overtakes its acquire leaves a
// tombstone that refuses the acquire (see the package documentation). The
// conformance suite redlocktest.TestNode checks all of it.
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

// AsyncNode is an optional Node ability: script calls that complete by
// callback. A Locker whose Node is an AsyncNode starts every call to it
// without a goroutine and counts its vote when done runs, typically on the
// reader goroutine of a pipelined connection; a master that does not answer
// then costs a pending call, not a parked goroutine. Other Nodes get a
// goroutine per call. *pool.Node implements it. A wrapper Node must forward
// it (or not implement it at all, so that its EvalPrepared or Eval is
// called).
//
// EvalPreparedAsync returns at once and runs done.Complete exactly once,
// with the reply and error that PreparedEvaler.EvalPrepared (the EVAL
// fallback included) would have returned. done may run on any goroutine,
// also on the caller's before the method returns. It does not block, and an
// implementation must not block in it either: what done does may send
// further calls to the same Node. done must run eventually, also for a
// master that never answers (an implementation bounds a pending call, as
// pool.Config.StallTimeout does, and completes it at its own Close). ctx
// bounds waiting before the command is sent (for a connection, say); a
// command that was sent is never sent again.
type AsyncNode interface {
	EvalPreparedAsync(ctx context.Context, src string, cmdArgs []any, done Completion)
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
