package goredis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/pubsub"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/redis/go-redis/v9"
)

// Node is one Redis master reached through a go-redis client. It is a
// redlock.Capable whose Abilities are EvalPrepared and Subscribe, and,
// over a *redis.Client, Identity (identity.go) and Confirm (durable.go).
// Its methods are safe for concurrent use.
type Node struct {
	c       redis.UniversalClient
	rc      *redis.Client // c when it is a *redis.Client: one master process at a time
	addr    string
	conn    *connState // nil when the Node cannot watch c's dials (a ClusterClient)
	subs    *pubsub.Registry
	ident   identity          // read on each new connection of rc, and before the first call
	durable nodeutil.Durables // durable.go
	probe   atomic.Int64      // the durable probes' counter
}

var _ redlock.Capable = (*Node)(nil)

// Abilities returns what the Node can do beyond redlock.Node's three
// methods: EvalPrepared and Subscribe, and, over a *redis.Client (one
// server, or a failover client), Identity and Confirm. A Node over a
// ClusterClient has neither (a cluster is many master processes):
// redlock.New refuses it while the restart guard is on, and with
// Config.Durability.
func (n *Node) Abilities() redlock.Abilities {
	a := redlock.Abilities{EvalPrepared: n.EvalPrepared, Subscribe: n.Subscribe}
	if n.rc != nil {
		a.Identity, a.Confirm = n.Identity, n.Confirm
	}
	return a
}

// New returns a Node over c, which must be one master: a *redis.Client (one
// server, or the master of a Sentinel master set, from
// redis.NewFailoverClient), or a *redis.ClusterClient over one Redis
// Cluster (the whole cluster is one master) whose options name one seed
// address. It refuses a *redis.Ring (ErrRing), and a ClusterClient with
// several seed addresses (ErrSeveralMasters): redis.NewUniversalClient
// makes one from several Addrs, which would merge several masters into
// one vote. For a cluster given several seeds, use NewCluster.
//
// The caller keeps c, and closes it after closing the Node; the Node only
// adds its own pub/sub connection, opened on the first Subscribe, and, to a
// *redis.Client, a hook that watches its dials (so that a call to a
// master that refuses connections fails with the dial's error at once,
// instead of waiting for go-redis's dial retries until its context ends)
// and an OnConnect, run after c's own, that reads the master's identity
// on each new connection (identity.go); add the Node before c is shared by
// goroutines, as for any AddHook. Connections c made before New (a
// start-up PING) were not read: until the Node has a reading, its first
// call reads the identity through c before its command goes out. The
// Node's commands are never retried by go-redis, whatever c's MaxRetries
// (see the package documentation), so c need not be configured for the
// Node.
//
// What the Node can guarantee depends on c. Over a *redis.Client (one
// server, or a failover client) it knows the master process behind every
// reply it returns, and confirms durable grants: its Abilities are
// EvalPrepared, Subscribe, Identity and Confirm, all a Locker asks for.
// Over a *redis.ClusterClient (or any other client) it has EvalPrepared
// and Subscribe only: a cluster is many master processes, with no one
// identity, so redlock.New refuses the Node while the restart guard is on
// (the default) and with Config.Durability.
//
// Addr is c's address: Options().Addr for a *redis.Client, "cluster:" and
// the seed addresses joined by commas for a *redis.ClusterClient. A failover
// client (whose go-redis Options name no master) and any other
// UniversalClient get their type and pointer, e.g. "FailoverClient@0xc000123456";
// unique within a process, as a Locker requires.
func New(c redis.UniversalClient) (*Node, error) {
	if err := checkMaster(c, false); err != nil {
		return nil, err
	}
	return newNode(c), nil
}

// NewCluster returns a Node over a *redis.ClusterClient whose seed
// addresses are all nodes of one Redis Cluster: the whole cluster is one
// master, whose lock keys share one hash slot. Use it for a cluster given
// several seeds, which New refuses since it cannot tell them from several
// independent masters. Otherwise it is New.
func NewCluster(c *redis.ClusterClient) (*Node, error) {
	if err := checkMaster(c, true); err != nil {
		return nil, err
	}
	return newNode(c), nil
}

func newNode(c redis.UniversalClient) *Node {
	n := &Node{c: c, addr: addrOf(c)}
	n.durable.Commit, n.durable.RunID = n.commit, n.ident.RunID
	if rc, ok := c.(*redis.Client); ok {
		n.rc = rc
		n.conn = newConnState()
		n.conn.connected = rc.PoolStats().TotalConns > 0
		rc.AddHook(n.conn)
		n.watchIdentity(rc)
	}
	n.subs = pubsub.New(pubsub.Config{Dial: n.dialPubSub})
	return n
}

func addrOf(c redis.UniversalClient) string {
	switch c := c.(type) {
	case *redis.Client:
		if a := c.Options().Addr; a != "FailoverClient" {
			return a
		}
		return fmt.Sprintf("FailoverClient@%p", c)
	case *redis.ClusterClient:
		if addrs := c.Options().Addrs; len(addrs) > 0 {
			return "cluster:" + strings.Join(addrs, ",")
		}
	}
	return fmt.Sprintf("%T@%p", c, c)
}

// Addr returns the master's name (see New).
func (n *Node) Addr() string { return n.addr }

// Do sends one command, once, and returns its reply: nil for a nil reply
// (go-redis's redis.Nil error becomes a nil reply and a nil error), a status
// or bulk string as a string, an integer as int64, an array as []any, and a
// Redis error reply as the go-redis error value (it matches redis.Error with
// errors.As). It returns when ctx ends, with an error that matches
// ctx.Err(). A command that would change the state of the pooled
// connection it goes out on (MULTI, SELECT, CLIENT REPLY, a SUBSCRIBE, ...)
// is refused before anything is sent (nodeutil.CheckShared, matching
// nodeutil.ErrConnState): the connection goes back to the pool for the
// next caller, who would get the replies out of step (QUEUED for a lock
// script after a MULTI). Blocking commands hold one pooled connection only,
// and pass.
//
// The command runs on a goroutine of its own under a context that keeps
// ctx's values but neither its end nor its deadline, so that connection
// set-up is bounded by the client's DialTimeout and not by this call.
func (n *Node) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	if err := nodeutil.CheckShared(cmd, args, false); err != nil {
		return nil, fmt.Errorf("goredis: %s: %w", n.addr, err)
	}
	c := &call{n: n}
	c.setArgs(cmd, args)
	return n.run(ctx, c, -1)
}

// Eval runs the Lua script src by its SHA1 hex digest hash (EVALSHA), and
// sends its source (EVAL) only when the master answers NOSCRIPT: a command
// that may have reached the master is never sent again. The EVAL goes out
// even when ctx has ended meanwhile. Replies as for Do.
func (n *Node) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	cmdArgs := make([]any, 0, 2+len(keys)+len(args))
	cmdArgs = append(cmdArgs, hash, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	return n.EvalPrepared(ctx, src, append(cmdArgs, args...))
}

// EvalPrepared is Eval with the EVALSHA argument list built by the caller:
// the script's SHA1 hex digest, the number of keys, the keys, then the
// arguments. It only reads cmdArgs, and not after it returns.
//
// The EVALSHA, and the EVAL after NOSCRIPT, run on a goroutine of their own
// that the caller's end does not stop (a nodeutil.Detached): the caller
// returns when ctx ends, and the call goes on until it is answered or
// nodeutil.DefaultLinger past ctx's deadline, when its context's Done
// closes (go-redis stops waiting for a pooled connection or a dial only
// then), so that a release answered NOSCRIPT after the node timeout still
// runs. The EVAL's arguments are built only when the master answered
// NOSCRIPT.
func (n *Node) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	c := &call{n: n, script: true, src: src}
	c.setArgs("evalsha", cmdArgs)
	return n.run(ctx, c, nodeutil.DefaultLinger)
}

// onceCmd is a go-redis command that go-redis never retries: its retry
// loops (Client.MaxRetries, ClusterClient's retry on another node) all
// consult Cmder.NoRetry. Redirections (MOVED, ASK, READONLY), which the
// master answers without running the command, are still followed.
type onceCmd struct{ *redis.Cmd }

func (onceCmd) NoRetry() bool { return true }

// call is one call of the Node, made for it alone: its command, the
// nodeutil.Detached it runs as (which is also the context go-redis gets,
// and may keep: a call is never reused), and its arguments, in buf when
// they fit. One allocation holds it all.
type call struct {
	nodeutil.Detached
	n      *Node
	script bool   // EVALSHA, then EVAL after NOSCRIPT
	src    string // the script's source
	cmd    redis.Cmd
	buf    [12]any
}

// setArgs sets c's command to name followed by args, copied: the caller's
// list is not read after the call returns.
func (c *call) setArgs(name string, args []any) {
	all := c.buf[:0]
	if 1+len(args) > len(c.buf) {
		all = make([]any, 0, 1+len(args))
	}
	all = append(append(all, name), args...)
	// redis.NewCmd's value, copied in: a Cmd holds no lock, and the Cmd is
	// c's alone, so it costs no allocation of its own.
	c.cmd = *redis.NewCmd(&c.Detached, all...)
}

// Send sends the command once, and a script's EVAL after NOSCRIPT unless
// the call's context has ended meanwhile (past the linger).
func (c *call) Send(ctx context.Context) (any, error) {
	reply, err := c.n.once(ctx, &c.cmd)
	if !c.script || err == nil || !redis.HasErrorPrefix(err, "NOSCRIPT") {
		return reply, err
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr
	}
	sha := c.cmd.Args() // evalsha, digest, number of keys, keys, arguments
	eval := make([]any, 0, 1+len(sha))
	eval = append(append(eval, "eval", c.src), sha[2:]...)
	return c.n.once(ctx, redis.NewCmd(ctx, eval...))
}

// run runs c on its own goroutine (c.Run), for linger past ctx's deadline
// (no deadline when linger < 0), and returns its reply, or when ctx ends,
// or, when the call needs a new connection, at the client's next failed
// dial (connstate.go). The order of the Node's commands does not matter
// to the locks (package redlock's tombstones), so none waits for another.
// A command is not sent when ctx has ended before.
func (n *Node) run(ctx context.Context, c *call, linger time.Duration) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, n.wrap(ctx, err) // never sent
	}
	var failed context.Context
	if n.conn != nil {
		failed = n.conn.watch(n.c) // nil while the client is connected: the common case
	}
	wait := ctx
	if failed != nil {
		var cancel context.CancelFunc
		wait, cancel = context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(failed, cancel)()
	}
	reply, err := n.runOn(wait, c, linger)
	switch {
	case err == nil:
		return reply, nil
	case failed != nil && ctx.Err() == nil && wait.Err() != nil:
		// The caller still waits: the dial's error is the call's.
		return nil, fmt.Errorf("goredis: %s: %w", n.addr, context.Cause(failed))
	}
	return nil, n.wrap(ctx, err)
}

// runOn runs c once the master's identity is known (identity.go).
func (n *Node) runOn(wait context.Context, c *call, linger time.Duration) (any, error) {
	if err := n.ident.known(wait, n.rc); err != nil {
		return nil, err
	}
	return c.Run(wait, c, linger, true)
}

// once runs cmd, which go-redis never retries, under ctx, and converts its
// reply: redis.Nil becomes a nil reply.
func (n *Node) once(ctx context.Context, cmd *redis.Cmd) (any, error) {
	_ = n.c.Process(ctx, onceCmd{cmd})
	reply, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return reply, err
}

// wrap keeps a Redis error reply as it is (it matches redis.Error) and
// prefixes any other error with the node's address. An error of an ended
// ctx also carries the client's last dial error, if its last dial failed.
func (n *Node) wrap(ctx context.Context, err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err)
		}
		if n.conn != nil {
			if lastErr := n.conn.err(); lastErr != nil {
				return fmt.Errorf("goredis: %s: %w (last connection error: %w)", n.addr, err, lastErr)
			}
		}
	}
	return fmt.Errorf("goredis: %s: %w", n.addr, err)
}

// Close ends the Node's pub/sub connection, if any, and waits for its
// goroutines. It does not close the go-redis client, which the caller owns.
func (n *Node) Close() error { return n.subs.Close() }
