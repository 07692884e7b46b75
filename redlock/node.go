package redlock

import "context"

// Node is one independent Redis master. *pool.Node satisfies it; so can an
// adapter for any other Redis client.
//
// A Node may have optional abilities, exported interfaces that a Locker
// detects by type assertion, the way io.Copy detects io.WriterTo:
// Subscriber (wake on release) and PreparedEvaler (a script call whose
// argument list is built once per fan-out). A Node that wraps another Node
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
