package redlock

import (
	"context"
	"errors"
	"time"
)

// Node is one independent Redis master. *pool.Node satisfies it; so can an
// adapter for any other Redis client. Its three methods are all a Node must
// have; what it can do beyond them it tells in one place, its Abilities
// (see Capable), which a Locker reads once, in New.
//
// What a Node must guarantee for the locks' safety is little: it sends a
// command at most once (a lost reply is a failed call, never a reason to
// send again), it counts an error reply as an error, and a script that the
// master answers NOSCRIPT goes again as EVAL even when its caller stopped
// waiting (a release must land also when it was late). The order of
// commands does not matter: a release that overtakes its acquire leaves a
// tombstone that refuses the acquire (see the package documentation). The
// conformance suite redlocktest.TestNode checks all of it, and every
// ability a Node claims.
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

// Capable is a Node that can do more than Node's three methods: its
// Abilities say what. A Locker reads them once, in New (AbilitiesOf), and
// says there what it cannot guarantee through a Node that lacks one: the
// restart guard needs Identity, Config.Durability needs Confirm. A Node that
// wraps another Node (to count, trace or fault its calls) forwards its
// abilities in one place, overriding those whose calls it must see (a
// wrapper that embeds a Capable type gets its Abilities promoted, which
// call the embedded Node's methods, not the wrapper's: override them):
//
//	func (w *wrapper) Abilities() redlock.Abilities {
//		a := redlock.AbilitiesOf(w.inner)
//		a.EvalPrepared, a.EvalAsync = nil, nil // every script call goes through w.Eval
//		return a
//	}
type Capable interface {
	Node
	Abilities() Abilities
}

// AbilitiesOf returns n's Abilities: n.Abilities() when n is Capable, and
// none otherwise.
func AbilitiesOf(n Node) Abilities {
	if c, ok := n.(Capable); ok {
		return c.Abilities()
	}
	return Abilities{}
}

// Abilities is what a Node can do beyond its three methods, each a func
// that is nil when the Node cannot. Every one of them keeps the transport
// rules of Node (sent at most once, error replies as errors, the EVAL
// fallback after NOSCRIPT also when the caller gave up).
type Abilities struct {
	// EvalPrepared runs a script call whose EVALSHA argument list was
	// built once per fan-out: the script's SHA1 hex digest, the number of
	// keys, the keys, then the arguments. It behaves as Eval does with
	// the same script (src), EVAL fallback and reply conventions
	// included, and only reads cmdArgs. Without it, a Locker calls Eval.
	EvalPrepared func(ctx context.Context, src string, cmdArgs []any) (any, error)

	// EvalAsync is EvalPrepared completed by callback: it returns at
	// once and runs done.Complete exactly once, with the reply and error
	// that EvalPrepared would have returned, on any goroutine (also the
	// caller's, before EvalAsync returns), typically a pipelined
	// connection's reader. Neither it nor done blocks: what done does may
	// send further calls to the same Node. done must run eventually, also
	// for a master that never answers (bound a pending call, as
	// pool.Config.StallTimeout does, and complete it at Close). ctx bounds
	// waiting before the command is sent; a command that was sent is never
	// sent again. With it, a Locker starts every call to the Node without
	// a goroutine; without it, each call gets one.
	EvalAsync func(ctx context.Context, src string, cmdArgs []any, done Completion)

	// Subscribe is wake on release: it registers ch to receive a
	// non-blocking send for every message published on channel, until
	// unsubscribe is called, and returns when ctx ends. A waiting
	// Locker.Lock subscribes to ReleaseChannel(key) and tries again as
	// soon as a master announces a release, instead of only after its
	// backoff (unless Config.DisableWakeOnRelease).
	Subscribe func(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error)

	// Identity returns the master's process as the Node read it on its
	// newest connection (INFO server and persistence, CONFIG GET
	// appendfsync, read when the connection was set up, before any
	// command on it): a restart or a failover changes the run id. It must
	// not block. Once a call through the Node got the master's reply,
	// Identity must know the process that answered; until then, and when
	// the master refuses INFO (an ACL user without it), it returns an
	// error matching ErrNoIdentity that says why. The restart guard needs
	// it (Config.RestartGuard); New refuses a Node without it unless the
	// guard is off or the masters are declared to persist every write
	// (Config.FsyncAlways).
	Identity func() (Identity, error)

	// Confirm asks the master to confirm that every write that ran on it
	// before the call is durable: with local, in its AOF on disk
	// (WAITAOF); and acknowledged by replicas of its replicas (WAITAOF's
	// second count, or WAIT). It writes the key probe first, on a
	// connection that no other caller shares (WAIT and WAITAOF block the
	// connection they are sent on, and wait for its own writes), returns
	// at once, and runs done once with the counts acknowledged (as WAITAOF
	// answers: 0 or 1 local, and replicas), or an error; a confirmation
	// made by another master process than the one Identity knew when
	// Confirm was called fails. ctx's deadline bounds the wait; done must
	// not block. Config.Durability needs it.
	Confirm func(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error))
}

// Identity is a master's process, as a Node read it.
type Identity struct {
	// RunID is the process's run_id: every restart, and every failover
	// to a replica, changes it.
	RunID string
	// Started is the latest the process can have started, on the client's
	// clock (INFO gives the uptime in whole seconds).
	Started time.Time
	// AppendOnly is whether the master keeps an AOF (appendonly yes), and
	// AppendFsync its appendfsync setting ("always", "everysec", "no"; ""
	// when the master did not say).
	AppendOnly  bool
	AppendFsync string
	// Version is the server's redis_version ("7.0.15"; Valkey reports the
	// Redis version it is compatible with), "" when unknown.
	Version string
}

// PersistsEveryWrite reports whether the master writes every command to
// its AOF on disk before it answers (AOF on, appendfsync always): such a
// master comes back from a restart with every grant it made.
func (id Identity) PersistsEveryWrite() bool {
	return id.AppendOnly && id.AppendFsync == "always"
}

// ErrNoIdentity is matched by the error of Abilities.Identity when the Node
// does not know its master's process: no call reached the master yet, or
// the master refused to say (INFO forbidden by an ACL).
var ErrNoIdentity = errors.New("redlock: the master's identity is unknown")

// Completion receives the outcome of one Abilities.EvalAsync call:
// Complete(reply, err) runs exactly once. It is an interface, not a func,
// so that a caller can complete many calls through values it allocated
// once (a fan-out passes a pointer into an array of them); CompletionFunc
// adapts a func. It is an alias of an unnamed interface type, so that a
// package can implement it without naming redlock.
type Completion = interface {
	Complete(reply any, err error)
}

// CompletionFunc is a func used as a Completion.
type CompletionFunc func(reply any, err error)

// Complete calls f(reply, err).
func (f CompletionFunc) Complete(reply any, err error) { f(reply, err) }
