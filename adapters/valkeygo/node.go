package valkeygo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/pubsub"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/valkey-io/valkey-go"
)

// Node is one master reached through a valkey-go client. It implements
// redlock.Node, redlock.Subscriber and redlock.PreparedEvaler. Its methods
// are safe for concurrent use.
type Node struct {
	exec *nodeutil.Exec[valkey.Client] // Do, Eval, EvalPrepared
	own  *nodeutil.Lazy[valkey.Client] // Open's client; nil for New's
	subs *pubsub.Registry
}

var _ redlock.Capable = (*Node)(nil)

// Abilities returns what the Node can do beyond redlock.Node's three
// methods: EvalPrepared and Subscribe.
func (n *Node) Abilities() redlock.Abilities {
	return redlock.Abilities{EvalPrepared: n.EvalPrepared, Subscribe: n.Subscribe}
}

// New returns a Node over c. The caller keeps c, and closes it after
// closing the Node; the Node only adds its own pub/sub connection, taken
// from c on the first Subscribe. A service whose masters may be down when
// it starts makes its Nodes with Open instead: valkey.NewClient fails when
// it cannot connect.
//
// c may reach one master (a standalone client, or a Sentinel client that
// follows one), or a cluster (the whole cluster is one master). Its options
// cannot be read back, so New cannot check them: ConnLifetime must stay 0
// and DisableRetry should be true (see the package documentation).
//
// Addr is the master's address for a standalone client, "cluster:" and
// the cluster nodes known at New joined by commas for a cluster client, and
// the client's type and pointer for any other client (a Sentinel client's
// master moves): unique within a process, as a Locker requires.
func New(c valkey.Client) *Node {
	return newNode(addrOf(c), func(context.Context) (valkey.Client, error) { return c, nil }, nil)
}

// newNode returns a Node named addr whose client comes from client; own
// is set when the Node owns it.
func newNode(addr string, client func(context.Context) (valkey.Client, error), own *nodeutil.Lazy[valkey.Client]) *Node {
	n := &Node{own: own, exec: &nodeutil.Exec[valkey.Client]{
		Name:       "valkeygo",
		Addr:       addr,
		Client:     client,
		Send:       send,
		Reply:      reply,
		IsNoScript: isNoScript,
	}}
	n.subs = pubsub.New(pubsub.Config{Dial: n.dialPubSub})
	return n
}

func addrOf(c valkey.Client) string {
	return nodeutil.ClientName(c, string(c.Mode()), slices.Collect(maps.Keys(c.Nodes())))
}

// Addr returns the master's name (see New and Open).
func (n *Node) Addr() string { return n.exec.Addr }

// Do sends one command, once, and returns its reply: nil for a nil reply,
// a status or bulk string as a string, an integer as int64, a double as
// float64, an array as []any, and an error reply as an error that matches
// *valkey.ValkeyError with errors.As (transport errors do not), with the
// master's message (the "ERR " prefix that valkey-go drops is put back).
// Arguments are formatted as redigo does (nodeutil.FormatArg). It returns
// when ctx ends, with an error that matches ctx.Err(). On a cluster client
// the command goes to any node and follows its MOVED redirection.
func (n *Node) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	return n.exec.Do(ctx, cmd, args...)
}

// Eval runs the Lua script src by its SHA1 hex digest hash (EVALSHA), and
// sends its source (EVAL) only when the master answers NOSCRIPT, even when
// ctx has ended meanwhile. Replies as for Do. On a cluster client the keys
// must share a hash slot; if they do not, Eval returns an error without
// sending anything.
func (n *Node) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	return n.exec.Eval(ctx, hash, src, keys, args...)
}

// EvalPrepared is Eval with the EVALSHA argument list built by the caller:
// the script's SHA1 hex digest, the number of keys, the keys, then the
// arguments. It only reads cmdArgs.
func (n *Node) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	return n.exec.EvalPrepared(ctx, src, cmdArgs)
}

// send is the Node's nodeutil.Exec.Send: one command, built (a builder's
// panic becomes an error, with nothing sent) and sent once.
func send(ctx context.Context, c valkey.Client, cmd, keys, args []string) (reply any, err error) {
	defer func() {
		if p := recover(); p != nil {
			reply, err = nil, fmt.Errorf("cannot build the command: %v", p)
		}
	}()
	built := c.B().Arbitrary(cmd...).Keys(keys...).Args(args...).Build()
	reply, err = c.Do(ctx, built).ToAny()
	if valkey.IsValkeyNil(err) {
		return nil, nil
	}
	return reply, err
}

// reply returns an error reply with the master's message; it matches
// *valkey.ValkeyError.
func reply(err error) (error, bool) {
	if verr, ok := valkey.IsValkeyErr(err); ok {
		return replyError{verr}, true
	}
	return nil, false
}

func isNoScript(err error) bool {
	var verr *valkey.ValkeyError
	return errors.As(err, &verr) && verr.IsNoScript()
}

// replyError is an error reply with the master's message (valkey-go drops
// the "ERR " of a generic one). It unwraps to the *valkey.ValkeyError.
type replyError struct{ *valkey.ValkeyError }

func (e replyError) Unwrap() error { return e.ValkeyError }

// Error returns the message as the master sent it.
func (e replyError) Error() string { return nodeutil.ReplyMessage(e.ValkeyError.Error()) }

// Close ends the Node's pub/sub connection, if any, and waits for its
// goroutines. It closes the client only when Open made it: New's client is
// the caller's.
func (n *Node) Close() error {
	n.subs.Close()
	if n.own != nil {
		n.own.Close(valkey.Client.Close)
	}
	return nil
}
