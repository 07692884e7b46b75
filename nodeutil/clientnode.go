package nodeutil

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/quorumlock/quorumlock/pubsub"
	"github.com/quorumlock/quorumlock/redlock"
)

// ClientNode is a redlock.Node over a rueidis client
// (github.com/redis/rueidis) or a valkey-go one
// (github.com/valkey-io/valkey-go, a fork of rueidis with the same API):
// C is the library's Client. An adapter's Node is a struct that embeds a
// *ClientNode and nothing else, so that its methods are the Node's and
// its type names the adapter in errors (redlock.New's say which Node);
// the two adapters in this repository have no code of their own but their
// constructors and their pub/sub hooks (a struct literal of the library's
// type, which only they can write). Its methods are safe for concurrent
// use.
//
// What it can do depends on how it was made. OpenClientNode makes the
// client itself, from the caller's options, and reads the master's
// identity on every connection the client dials, before the client uses
// it (dialident.go): its Abilities are EvalPrepared, Subscribe, Identity
// and Confirm (none of the last two over several addresses, a Redis
// Cluster's seeds: a cluster is many master processes; over one address
// that turns out to be a cluster node, Identity says so and Confirm
// fails). NewClientNode takes a client that the caller made, whose
// connections it cannot see: its Abilities are EvalPrepared and
// Subscribe, so that redlock.New refuses it unless the restart guard is
// off, and refuses Config.Durability; Identity says to use Open.
type ClientNode[C any] struct {
	exec  *Exec[C]         // Do, Eval, EvalPrepared
	calls clientCalls[C]   // what names the library's types
	own   *Lazy[C]         // OpenClientNode's client; nil for NewClientNode's
	subs  *pubsub.Registry // wake on release
	ident *Identity        // read on each connection OpenClientNode's client dials; nil for NewClientNode's
	// several: the options name several addresses, a cluster's seeds;
	// cluster: the client made is a cluster client.
	several bool
	cluster atomic.Bool
	durable Durables
	probes  atomic.Int64 // the durable probes' counter
}

// clientCalls are the calls a ClientNode makes on its client, made where
// the library's types are known (callsOf).
type clientCalls[C any] struct {
	// send sends one command, built from cmd, keys and args, and
	// converts its reply (Exec.Send).
	send func(ctx context.Context, c C, cmd, keys, args []string) (any, error)
	// confirm writes probe (with the value n) on a dedicated connection
	// and waits for it (WAITAOF, or WAIT), after INFO server names the
	// process that answers.
	confirm func(ctx context.Context, c C, probe string, n int64, local bool, replicas int) (l, r int, ranOn string, err error)
	// subscriber is a dedicated pub/sub connection of c.
	subscriber func(c C) pubsub.Conn
	close      func(c C)
	cluster    func(c C) bool // a cluster client
	name       func(c C) string
}

// The parts of a rueidis or valkey-go client that a ClientNode uses. Their
// type parameters are the library's own types (the client, its
// DedicatedClient, the command builder and what its chains return,
// Completed, RedisResult, ClientMode), which Go infers from the client's
// type and the hooks' type: the adapters name none of them.
type (
	// rueidisClient is the library's Client.
	rueidisClient[C any, D rueidisDedicated[B, Cmd, R], B rueidisBuilder[A, S, SC, U, UC, Cmd], A rueidisArbitrary[A, Cmd], S rueidisChannels[SC], SC rueidisBuild[Cmd], U rueidisChannels[UC], UC rueidisBuild[Cmd], Cmd any, R rueidisResult, M ~string] interface {
		B() B
		Do(ctx context.Context, cmd Cmd) R
		Dedicated(fn func(D) error) error
		Dedicate() (D, func())
		Nodes() map[string]C
		Mode() M
		Close()
	}
	// rueidisDedicated is the library's DedicatedClient.
	rueidisDedicated[B, Cmd, R any] interface {
		B() B
		Do(ctx context.Context, cmd Cmd) R
		DoMulti(ctx context.Context, multi ...Cmd) []R
		Close()
	}
	// rueidisBuilder is the library's Builder.
	rueidisBuilder[A, S, SC, U, UC, Cmd any] interface {
		Arbitrary(token ...string) A
		Subscribe() S
		Unsubscribe() U
	}
	// rueidisArbitrary is what Builder.Arbitrary returns.
	rueidisArbitrary[A, Cmd any] interface {
		Keys(keys ...string) A
		Args(args ...string) A
		Build() Cmd
	}
	// rueidisChannels is what Builder.Subscribe and Unsubscribe return.
	rueidisChannels[SC any] interface{ Channel(channel ...string) SC }
	// rueidisBuild completes a command.
	rueidisBuild[Cmd any] interface{ Build() Cmd }
	// rueidisResult is the library's RedisResult.
	rueidisResult interface {
		ToAny() (any, error)
		ToString() (string, error)
		AsInt64() (int64, error)
		AsIntSlice() ([]int64, error)
		Error() error
	}
)

// NewClientNode returns an adapter's Node (N, a struct that embeds a
// *ClientNode[C] and nothing else) over c, a client that the caller made
// and keeps: Close does not close it. name prefixes the Node's errors (the
// adapter's package: "rueidis"); hooks registers message and subscription
// as the pub/sub hooks of d, a dedicated client, and returns the channel
// that reports d's end (DedicatedClient.SetPubSubHooks with a PubSubHooks
// literal, which only the adapter can write: the library's struct has an
// unexported field).
//
// Addr is c's address for a standalone client, "cluster:" and the cluster
// nodes known now for a cluster client, and c's type and pointer otherwise
// (ClientName). The Node cannot see c's connections: it has no Identity
// nor Confirm in its Abilities (see ClientNode).
func NewClientNode[N ~struct{ *ClientNode[C] }, C rueidisClient[C, D, B, A, S, SC, U, UC, Cmd, R, M], D rueidisDedicated[B, Cmd, R], B rueidisBuilder[A, S, SC, U, UC, Cmd], A rueidisArbitrary[A, Cmd], S rueidisChannels[SC], SC rueidisBuild[Cmd], U rueidisChannels[UC], UC rueidisBuild[Cmd], Cmd any, R rueidisResult, M ~string](name string, c C, hooks func(d D, message func(channel string), subscription func(kind, channel string)) <-chan error) *N {
	calls := callsOf[C](hooks)
	n := newClientNode(name, calls.name(c), calls)
	n.exec.Client = func(context.Context) (C, error) { return c, nil }
	n.cluster.Store(calls.cluster(c))
	return &N{n}
}

// newClientNode returns a ClientNode named addr, without its client.
func newClientNode[C any](name, addr string, calls clientCalls[C]) *ClientNode[C] {
	n := &ClientNode[C]{calls: calls, exec: &Exec[C]{
		Name:       name,
		Addr:       addr,
		Send:       calls.send,
		Reply:      clientReply,
		IsNoScript: isClientNoScript,
	}}
	n.subs = pubsub.New(pubsub.Config{Dial: n.dialPubSub})
	n.durable.Commit = n.commit
	n.durable.RunID = func() string {
		if n.ident == nil {
			return ""
		}
		return n.ident.RunID()
	}
	return n
}

// callsOf makes the calls of a ClientNode over a C.
func callsOf[C rueidisClient[C, D, B, A, S, SC, U, UC, Cmd, R, M], D rueidisDedicated[B, Cmd, R], B rueidisBuilder[A, S, SC, U, UC, Cmd], A rueidisArbitrary[A, Cmd], S rueidisChannels[SC], SC rueidisBuild[Cmd], U rueidisChannels[UC], UC rueidisBuild[Cmd], Cmd any, R rueidisResult, M ~string](hooks func(D, func(string), func(string, string)) <-chan error) clientCalls[C] {
	return clientCalls[C]{
		send: func(ctx context.Context, c C, cmd, keys, args []string) (any, error) {
			built, err := buildCommand(func() Cmd { return c.B().Arbitrary(cmd...).Keys(keys...).Args(args...).Build() })
			if err != nil {
				return nil, err
			}
			reply, err := c.Do(ctx, built).ToAny()
			if isClientNil(err) {
				return nil, nil
			}
			return reply, err
		},
		confirm: func(ctx context.Context, c C, probe string, n int64, local bool, replicas int) (l, r int, ranOn string, err error) {
			err = c.Dedicated(func(d D) error {
				var err error
				l, r, ranOn, err = confirmOn[D, B, A, S, SC, U, UC, Cmd, R](ctx, d, probe, n, local, replicas)
				return err
			})
			return l, r, ranOn, err
		},
		subscriber: func(c C) pubsub.Conn {
			d, release := c.Dedicate()
			conn := pubsub.NewHookConn()
			conn.Broken = hooks(d, conn.Message, conn.Subscription)
			conn.Send = func(ctx context.Context, subscribe bool, channels []string) error {
				if subscribe {
					return d.Do(ctx, d.B().Subscribe().Channel(channels...).Build()).Error()
				}
				return d.Do(ctx, d.B().Unsubscribe().Channel(channels...).Build()).Error()
			}
			conn.Release = func() {
				d.Close()
				release()
			}
			return conn
		},
		close:   func(c C) { c.Close() },
		cluster: func(c C) bool { return c.Mode() == "cluster" },
		name: func(c C) string {
			return ClientName(c, string(c.Mode()), slices.Collect(maps.Keys(c.Nodes())))
		},
	}
}

// buildCommand runs build, turning the panics of the library's command
// builder (keys in several slots on a cluster client, an empty command, a
// SUBSCRIBE) into errors: nothing is sent.
func buildCommand[Cmd any](build func() Cmd) (built Cmd, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot build the command: %v", p)
		}
	}()
	return build(), nil
}

// Addr returns the master's name (see NewClientNode and OpenClientNode).
func (n *ClientNode[C]) Addr() string { return n.exec.Addr }

// Abilities returns what the Node can do beyond redlock.Node's three
// methods: EvalPrepared and Subscribe, and, for a Node made by
// OpenClientNode over one master, Identity and Confirm.
func (n *ClientNode[C]) Abilities() redlock.Abilities {
	a := redlock.Abilities{EvalPrepared: n.EvalPrepared, Subscribe: n.Subscribe}
	if n.ident != nil && !n.several {
		a.Identity, a.Confirm = n.Identity, n.Confirm
	}
	return a
}

// Do sends one command, once, and returns its reply: nil for a nil reply
// (the library's Nil error becomes a nil reply and a nil error), a status
// or bulk string as a string, an integer as int64, a double as float64, an
// array as []any, and a Redis error reply as an error that matches the
// library's *RedisError (*rueidis.RedisError, *valkey.ValkeyError) with
// errors.As (transport errors do not), whose message is the master's (the
// libraries drop the "ERR " prefix of a generic error reply; the Node keeps
// it). Arguments are formatted as redigo does (FormatArg). It returns when
// ctx ends, with an error that matches ctx.Err(); the command then runs on
// in the client, bounded by its ConnWriteTimeout. A command that would
// change the state of the client's shared connections (MULTI, SELECT,
// CLIENT REPLY, ...) or block them is refused before anything is sent
// (CheckShared).
//
// Do does not know which arguments are keys: on a cluster client the
// command goes to any node and follows its MOVED redirection, which the
// master answers without running the command.
func (n *ClientNode[C]) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	return n.exec.Do(ctx, cmd, args...)
}

// Eval runs the Lua script src by its SHA1 hex digest hash (EVALSHA), and
// sends its source (EVAL) only when the master answers NOSCRIPT: a command
// that may have reached the master is never sent again. The EVAL goes out
// even when ctx has ended meanwhile (EvalDetached). Replies as for Do. On
// a cluster client the keys must share a hash slot; if they do not, Eval
// returns an error without sending anything.
func (n *ClientNode[C]) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	return n.exec.Eval(ctx, hash, src, keys, args...)
}

// EvalPrepared is Eval with the EVALSHA argument list built by the caller:
// the script's SHA1 hex digest, the number of keys, the keys, then the
// arguments. It only reads cmdArgs. It is redlock.Abilities.EvalPrepared.
func (n *ClientNode[C]) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	return n.exec.EvalPrepared(ctx, src, cmdArgs)
}

// Subscribe registers ch to receive a non-blocking send for every message
// published on channel at this master, until unsubscribe is called
// (idempotent). It returns once the master confirmed the subscription, or
// with an error matching ctx.Err() when ctx ends first (with the last
// connection error, if any); on error nothing stays registered. A full ch
// misses the message, so a waiter must also poll. After a reconnect every
// registration of a channel is woken once, since messages may have been
// lost. Every registration shares one dedicated connection of the client
// (its Dedicate, never its shared pipelined ones), opened on the first
// Subscribe and closed with the last unsubscribe or Close (see
// pubsub.Registry). It is redlock.Abilities.Subscribe.
func (n *ClientNode[C]) Subscribe(ctx context.Context, channel string, ch chan<- struct{}) (unsubscribe func(), err error) {
	unsubscribe, err = n.subs.Subscribe(ctx, channel, ch)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", n.exec.Name, n.exec.Addr, err)
	}
	return unsubscribe, nil
}

// dialPubSub is the Registry's Dial.
func (n *ClientNode[C]) dialPubSub(ctx context.Context) (pubsub.Conn, error) {
	c, err := n.exec.Client(ctx)
	if err != nil {
		return nil, err
	}
	return n.calls.subscriber(c), nil
}

// Close ends the Node's pub/sub connection, if any, and waits for its
// goroutines. It closes the client only when OpenClientNode made it:
// NewClientNode's client is the caller's, who closes it after the Node.
func (n *ClientNode[C]) Close() error {
	n.subs.Close()
	if n.own != nil {
		n.own.Close(n.calls.close)
	}
	return nil
}

// clientError is the libraries' error reply type (*rueidis.RedisError,
// *valkey.ValkeyError), by its methods.
type clientError interface {
	error
	IsNil() bool
	IsNoScript() bool
}

// clientReply returns an error reply with the master's message; it
// matches the library's error type.
func clientReply(err error) (error, bool) {
	var rerr clientError
	if errors.As(err, &rerr) && !rerr.IsNil() {
		return replyError{rerr}, true
	}
	return nil, false
}

// isClientNil reports whether err is the library's nil reply.
func isClientNil(err error) bool {
	if err == nil {
		return false // the common case, without errors.As's allocation
	}
	var rerr clientError
	return errors.As(err, &rerr) && rerr.IsNil()
}

// isClientNoScript reports whether err is a NOSCRIPT error reply.
func isClientNoScript(err error) bool {
	var rerr clientError
	return errors.As(err, &rerr) && rerr.IsNoScript()
}

// replyError is an error reply with the master's message: the libraries
// drop the "ERR " prefix of a generic error reply ("ERR unknown command"
// becomes "unknown command"), and Error puts it back, so that the Node
// reports errors as every other Node does. It unwraps to the library's
// error.
type replyError struct{ err clientError }

func (e replyError) Unwrap() error { return e.err }

// Error returns the message as the master sent it.
func (e replyError) Error() string { return ReplyMessage(e.err.Error()) }
