package rueidis

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/pubsub"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/redis/rueidis"
)

// Node is one Redis master reached through a rueidis client. It implements
// redlock.Node, redlock.Subscriber and redlock.PreparedEvaler. Its methods
// are safe for concurrent use.
type Node struct {
	exec *nodeutil.Exec[rueidis.Client] // Do, Eval, EvalPrepared
	own  *nodeutil.Lazy[rueidis.Client] // Open's client; nil for New's
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
// it starts makes its Nodes with Open instead: rueidis.NewClient fails
// when it cannot connect.
//
// c may reach one master (a standalone client, or a Sentinel client that
// follows one), or a Redis Cluster (the whole cluster is one master; a
// lock's keys share the {key} hash tag, so each script runs in one slot).
//
// c's options cannot be read back from a rueidis.Client, so New cannot
// check them; two of them matter for safety (see the package
// documentation). ClientOption.ConnLifetime must stay 0: when it retires a
// connection whose master has not answered within a second, rueidis sends
// the commands that were in flight on it again, which can run a lock
// command twice on the master. ClientOption.DisableRetry
// should be true: the Node's commands are never retried either way (rueidis
// retries only read-only commands, and the Node marks none so), but it keeps
// the rest of c's traffic from being resent too.
//
// Addr is the master's address for a standalone client, "cluster:" and
// the cluster nodes known at New joined by commas for a cluster client, and
// the client's type and pointer for any other client (a Sentinel client's
// master moves), e.g. "*rueidis.sentinelClient@0xc000123456": unique within
// a process, as a Locker requires.
func New(c rueidis.Client) *Node {
	return newNode(addrOf(c), func(context.Context) (rueidis.Client, error) { return c, nil }, nil)
}

// newNode returns a Node named addr whose client comes from client; own
// is set when the Node owns it.
func newNode(addr string, client func(context.Context) (rueidis.Client, error), own *nodeutil.Lazy[rueidis.Client]) *Node {
	n := &Node{own: own, exec: &nodeutil.Exec[rueidis.Client]{
		Name:       "rueidis",
		Addr:       addr,
		Client:     client,
		Send:       send,
		Reply:      reply,
		IsNoScript: isNoScript,
	}}
	n.subs = pubsub.New(pubsub.Config{Dial: n.dialPubSub})
	return n
}

func addrOf(c rueidis.Client) string {
	return nodeutil.ClientName(c, string(c.Mode()), slices.Collect(maps.Keys(c.Nodes())))
}

// Addr returns the master's name (see New and Open).
func (n *Node) Addr() string { return n.exec.Addr }

// Do sends one command, once, and returns its reply: nil for a nil reply
// (rueidis's Nil error becomes a nil reply and a nil error), a status or
// bulk string as a string, an integer as int64, a double as float64, an
// array as []any, and a Redis error reply as an error that matches
// *rueidis.RedisError with errors.As (transport errors do not), whose
// message is the master's (rueidis drops the "ERR " prefix of a generic
// error reply; the Node keeps it). Arguments are formatted as redigo does
// (nodeutil.FormatArg): strings and []byte as they are, numbers in
// decimal, bool as 1 or 0, nil as "". It returns when ctx ends, with an
// error that matches ctx.Err().
//
// Do does not know which arguments are keys: on a cluster client the
// command goes to any node and follows its MOVED redirection, which the
// master answers without running the command.
func (n *Node) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	return n.exec.Do(ctx, cmd, args...)
}

// Eval runs the Lua script src by its SHA1 hex digest hash (EVALSHA), and
// sends its source (EVAL) only when the master answers NOSCRIPT: a command
// that may have reached the master is never sent again. The EVAL goes out
// even when ctx has ended meanwhile. Replies as for Do. On a cluster client the keys must share a hash slot; if they do not, Eval
// returns an error without sending anything.
func (n *Node) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	return n.exec.Eval(ctx, hash, src, keys, args...)
}

// EvalPrepared is Eval with the EVALSHA argument list built by the caller:
// the script's SHA1 hex digest, the number of keys, the keys, then the
// arguments. It only reads cmdArgs.
func (n *Node) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	return n.exec.EvalPrepared(ctx, src, cmdArgs)
}

// send is the Node's nodeutil.Exec.Send. A command whose caller gave up
// runs on under the client's Dialer.Timeout and ConnWriteTimeout; the
// client spreads commands over several connections (PipelineMultiplex),
// which is why Exec keeps later commands behind it.
func send(ctx context.Context, c rueidis.Client, cmd, keys, args []string) (any, error) {
	built, err := build(c.B(), cmd, keys, args)
	if err != nil {
		return nil, err
	}
	reply, err := c.Do(ctx, built).ToAny()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	return reply, err
}

// build builds one command, turning the panics of rueidis's command builder
// (keys in different slots on a cluster client, an empty command, a
// SUBSCRIBE) into errors: nothing is sent.
func build(b rueidis.Builder, cmd, keys, args []string) (built rueidis.Completed, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("cannot build the command: %v", p)
		}
	}()
	return b.Arbitrary(cmd...).Keys(keys...).Args(args...).Build(), nil
}

// reply returns a Redis error reply with the master's message; it matches
// *rueidis.RedisError.
func reply(err error) (error, bool) {
	if rerr, ok := rueidis.IsRedisErr(err); ok {
		return replyError{rerr}, true
	}
	return nil, false
}

func isNoScript(err error) bool {
	var rerr *rueidis.RedisError
	return errors.As(err, &rerr) && rerr.IsNoScript()
}

// Close ends the Node's pub/sub connection, if any, and waits for its
// goroutines. It closes the client only when Open made it: New's client is
// the caller's.
func (n *Node) Close() error {
	n.subs.Close()
	if n.own != nil {
		n.own.Close(rueidis.Client.Close)
	}
	return nil
}
