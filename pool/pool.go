package pool

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
)

// Config configures one Redis master. Only Addr is required; every other
// zero value means the default documented on the field.
type Config struct {
	// Addr is the master's "host:port".
	Addr string
	// Username and Password authenticate (AUTH) each new connection; an
	// empty Password sends no AUTH, an empty Username uses Redis's default
	// user.
	Username string
	Password string
	// DB is the database SELECTed on each new connection; 0 selects nothing.
	DB int
	// TLS, when non-nil, dials with TLS using this configuration.
	TLS *tls.Config

	// DialTimeout bounds connection set-up (TCP connect, TLS, AUTH,
	// SELECT); 0 means 5s. Set-up runs on its own, not under the context of
	// the call that needed the connection: that call waits for it only
	// until its context ends, and the connection then serves later calls.
	DialTimeout time.Duration
	// ReadTimeout and WriteTimeout bound each read and write on a
	// connection; 0 means no bound beyond the caller's context, which is
	// how quorumlock uses them (the per-node timeout arrives as a context
	// deadline). On the pipelined connection, where reads serve every
	// caller, a read is bounded by StallTimeout instead; ReadTimeout then
	// bounds only the connection's set-up reads.
	ReadTimeout  time.Duration
	WriteTimeout time.Duration

	// MaxIdle is the number of idle connections kept; 0 means 64. It
	// applies with Pooled only: the pipelined mode keeps one connection.
	// Set it to the number of calls a master may have in flight at once:
	// a call beyond it dials a connection of its own, closed after it,
	// and under a churn of dials calls outlast a short node timeout.
	MaxIdle int
	// MaxActive caps open connections; 0 means no cap. At the cap, callers
	// wait for a free connection until their context ends. It applies
	// with Pooled only: the pipelined mode keeps one connection (plus the
	// pub/sub one of Subscribe, in both modes).
	MaxActive int
	// IdleTimeout closes connections idle for longer; 0 means 5 minutes.
	// It applies with Pooled only.
	IdleTimeout time.Duration
	// Pooled turns pipelining off. By default every command goes through
	// one shared connection per master, and the commands of concurrent
	// callers are written with a single system call (auto-pipelining).
	// Pooled gives each concurrent call a connection of its own from a
	// redigo pool (MaxIdle, MaxActive, IdleTimeout, HealthCheckAfter apply
	// then), which suits long-running commands that would hold up the
	// others on a shared connection.
	Pooled bool
	// StallTimeout closes the shared pipelined connection when its oldest
	// command got no reply for this long (a frozen master), failing the
	// commands on it; the next call dials anew. 0 means 1 second. It also
	// bounds how long a call completed by callback (DoAsync,
	// EvalPreparedAsync) can stay pending once written.
	StallTimeout time.Duration

	// HealthCheckAfter makes the pool PING a connection that has been idle
	// for longer than this before handing it out (bounded by the caller's
	// context); 0 means 10 seconds, a negative value turns the check off.
	// It applies with Pooled only; the pipelined connection is checked by
	// StallTimeout and, before a write after it was idle, for a close by
	// the master.
	HealthCheckAfter time.Duration
}

// Defaults applied to zero Config fields.
const (
	DefaultDialTimeout      = 5 * time.Second
	DefaultMaxIdle          = 64
	DefaultIdleTimeout      = 5 * time.Minute
	DefaultHealthCheckAfter = 10 * time.Second
	DefaultStallTimeout     = time.Second
)

// Node is one Redis master. It is safe for concurrent use.
type Node struct {
	addr    string
	cfg     Config
	dialer  *dialer       // the pipelined connection's set-up, see dial.go
	pooled  *pooledDialer // the Pooled mode's, see pooldial.go
	pool    *redis.Pool
	notify  *notifier          // the pub/sub side, see pubsub.go
	ident   *nodeutil.Identity // the master's process, as its connections saw it (identity.go)
	durable durables           // durable grants' confirmations (durable.go)
	mux     *mux               // the pipelined side, nil with Config.Pooled; see mux.go
}

// Stats counts a Node's connections.
type Stats struct {
	// Active is the number of open connections, in use or idle.
	Active int
	// Idle is the number of idle connections.
	Idle int
}

// ErrNoAddr is the error of every call on a Node made without an address.
var ErrNoAddr = errors.New("pool: no address")

// New returns a Node for cfg. It does not connect: the first call does.
func New(cfg Config) *Node {
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.MaxIdle <= 0 {
		cfg.MaxIdle = DefaultMaxIdle
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.HealthCheckAfter == 0 {
		cfg.HealthCheckAfter = DefaultHealthCheckAfter
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = DefaultStallTimeout
	}
	n := &Node{addr: cfg.Addr, cfg: cfg, ident: &nodeutil.Identity{}}
	n.dialer, n.pooled = newDialer(cfg, n.ident), newPooledDialer(cfg, n.ident)
	n.durable.init(n)
	n.notify = newNotifier(cfg.Addr, func(ctx context.Context) (redis.Conn, error) { return dial(ctx, cfg, n.ident) })
	if !cfg.Pooled {
		n.mux = newMux(n.dialer, cfg.StallTimeout, n.wrapAsync)
	}
	n.pool = &redis.Pool{
		DialContext: n.pooled.take,
		MaxIdle:     cfg.MaxIdle,
		MaxActive:   cfg.MaxActive,
		IdleTimeout: cfg.IdleTimeout,
		Wait:        true,
	}
	if cfg.HealthCheckAfter > 0 {
		n.pool.TestOnBorrowContext = func(ctx context.Context, c redis.Conn, lastUsed time.Time) error {
			if err := c.(*conn).checkIdle(); err != nil {
				return err // closed by the master while idle: never written to
			}
			if time.Since(lastUsed) < cfg.HealthCheckAfter {
				return nil
			}
			_, err := redis.DoContext(c, ctx, "PING")
			return err
		}
	}
	if cfg.HealthCheckAfter < 0 {
		n.pool.TestOnBorrowContext = func(ctx context.Context, c redis.Conn, _ time.Time) error {
			return c.(*conn).checkIdle()
		}
	}
	return n
}

// Addr returns the master's address as configured.
func (n *Node) Addr() string { return n.addr }

// Do sends one command and returns its reply, converted as redigo does:
// integers as int64, bulk strings as []byte, status replies as string, nil
// for a nil reply, and a Redis error reply as a redis.Error value in err.
// The call ends when ctx ends; a pooled connection whose command was cut
// short is closed, not reused. A command that would change the state of a
// shared connection (MULTI, SELECT, SUBSCRIBE, CLIENT REPLY, ...) fails
// with ErrConnState, and a blocking one (BLPOP, ...) in the pipelined mode
// with ErrBlocking, both before anything is sent. A command is sent once
// at most: a call whose connection broke fails, it is not retried.
func (n *Node) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	if err := checkShared(cmd, args, n.mux != nil); err != nil {
		return nil, err
	}
	reply, err := n.do(ctx, cmd, args)
	return reply, n.wrap(ctx, err)
}

// Eval runs a Lua script by its SHA1 hex digest (EVALSHA) and falls back to
// sending its source (EVAL, which also caches it on the server) when the
// server does not know it yet, as after a restart or SCRIPT FLUSH.
func (n *Node) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	cmdArgs := make([]any, 0, 2+len(keys)+len(args))
	cmdArgs = append(cmdArgs, hash, len(keys))
	for _, k := range keys {
		cmdArgs = append(cmdArgs, k)
	}
	cmdArgs = append(cmdArgs, args...)
	return n.EvalPrepared(ctx, src, cmdArgs)
}

// EvalPrepared is Eval with the EVALSHA argument list built by the caller:
// the script's SHA1 hex digest, the number of keys, the keys, then the
// arguments. It only reads cmdArgs, so one list can serve many nodes at
// once (redlock builds it once per fan-out). src is sent, with EVAL, only
// when the server does not know the script.
//
// A script that the master answers NOSCRIPT goes again as EVAL even when
// ctx ended meanwhile: in the pipelined mode its reply is read whatever
// the caller does; with Config.Pooled the call runs on a goroutine of its
// own, which the caller leaves when ctx ends, bounded by ctx's deadline
// plus Config.StallTimeout (nodeutil.EvalDetached). So a release answered
// NOSCRIPT after its caller's deadline (a master restarted, or its script
// cache flushed) still runs.
func (n *Node) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	if n.mux != nil {
		reply, err := n.mux.do(ctx, "EVALSHA", cmdArgs, src) // EVAL after NOSCRIPT
		return reply, n.wrap(ctx, err)
	}
	reply, err := nodeutil.EvalDetached(ctx, n.cfg.StallTimeout,
		func(ctx context.Context) (any, error) { return n.do(ctx, "EVALSHA", cmdArgs) },
		func(ctx context.Context) (any, error) { return n.do(ctx, "EVAL", nodeutil.EvalArgs(src, cmdArgs)) },
		isNoScript)
	return reply, n.wrap(ctx, err)
}

// Completion receives the outcome of a DoAsync or EvalPreparedAsync call.
type Completion = redlock.Completion

// CompletionFunc is a func used as a Completion.
type CompletionFunc = redlock.CompletionFunc

// Abilities returns what the Node can do beyond redlock.Node's three
// methods: every ability of redlock.Abilities (EvalAsync in the pipelined
// mode only: with Config.Pooled each call needs a goroutine of its own
// either way). It makes *Node a redlock.Capable.
func (n *Node) Abilities() redlock.Abilities {
	a := redlock.Abilities{
		EvalPrepared: n.EvalPrepared,
		Subscribe:    n.Subscribe,
		Identity:     n.Identity,
		Confirm:      n.Confirm,
	}
	if n.mux != nil {
		a.EvalAsync = n.EvalPreparedAsync
	}
	return a
}

// DoAsync is Do completed by callback: it
// returns at once, and done.Complete runs exactly once with what Do would
// have returned. In the pipelined mode it runs on the connection's reader
// goroutine as the reply arrives (or on whichever goroutine completes the
// call: the caller's, before DoAsync returns, when it fails at once), so it
// must not block; no goroutine waits for the reply, and a master that does
// not answer costs the pending command until Config.StallTimeout closes
// its connection. ctx bounds only the wait for a connection being dialed;
// once queued, the command is written and completes by its reply, its
// connection's failure, or Node.Close. Commands are written in the order
// of the calls (one pipelined connection; a command queued while a
// connection is dialed waits in line), except that a connection that
// breaks hands its unwritten commands to the next one, where commands
// made while it broke may precede them. With Config.Pooled, the call runs
// in a goroutine of its own, and its command on a connection of its own.
func (n *Node) DoAsync(ctx context.Context, cmd string, args []any, done Completion) {
	if err := checkShared(cmd, args, n.mux != nil); err != nil {
		done.Complete(nil, err)
		return
	}
	if n.mux == nil {
		go func() { done.Complete(n.Do(ctx, cmd, args...)) }()
		return
	}
	n.mux.start(ctx, cmd, args, "", done)
}

// EvalPreparedAsync is EvalPrepared completed by callback, as DoAsync is.
func (n *Node) EvalPreparedAsync(ctx context.Context, src string, cmdArgs []any, done Completion) {
	if n.mux == nil {
		go func() { done.Complete(n.EvalPrepared(ctx, src, cmdArgs)) }()
		return
	}
	n.mux.start(ctx, "EVALSHA", cmdArgs, src, done)
}

// do sends one command through the pipeline, or on a pooled connection.
func (n *Node) do(ctx context.Context, cmd string, args []any) (any, error) {
	if n.mux != nil {
		return n.mux.do(ctx, cmd, args, "")
	}
	c, err := n.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	// redigo hands out an idle connection, and DoContext writes on it,
	// whatever ctx says: a call whose context ended sends nothing.
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return redis.DoContext(c, ctx, cmd, args...)
}

func isNoScript(err error) bool {
	_, ok := err.(redis.Error)
	return ok && nodeutil.IsNoScript(err)
}

// wrap keeps Redis error replies as they are (so that callers can match
// redis.Error) and prefixes transport errors with the node's address. A
// call cut short by its context's deadline (redigo turns the deadline into
// a read timeout) also matches ctx.Err().
func (n *Node) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if rerr, ok := err.(redis.Error); ok {
		return rerr
	}
	cerr := ctx.Err()
	if dl, ok := ctx.Deadline(); ok && cerr == nil && !time.Now().Before(dl) {
		// redigo's read deadline is the context's deadline, and it can
		// fire before the context's own timer has marked it done.
		cerr = context.DeadlineExceeded
	}
	if cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("pool: %s: %w: %w", n.addr, cerr, err)
	}
	return fmt.Errorf("pool: %s: %w", n.addr, err)
}

// wrapAsync is wrap for a call completed by callback, whose context bounds
// only the wait for a connection (a context error says so itself).
func (n *Node) wrapAsync(err error) error {
	if err == nil {
		return nil
	}
	if rerr, ok := err.(redis.Error); ok {
		return rerr
	}
	return fmt.Errorf("pool: %s: %w", n.addr, err)
}

// Stats returns the connection counts.
func (n *Node) Stats() Stats {
	s := n.pool.Stats()
	st := Stats{Active: s.ActiveCount, Idle: s.IdleCount}
	if n.mux != nil && n.mux.active() {
		st.Active++
	}
	return st
}

// Close makes later calls fail, closes the pipelined connection (every
// command still on it completes with an error) and its goroutines, the
// pub/sub connection, the durable grants' connection and the Pooled mode's
// idle connections, and cancels a connection set-up in progress and waits
// for it; a Pooled connection in use is closed when its call ends.
func (n *Node) Close() error {
	n.notify.close() // the pub/sub connection and its goroutines
	n.durable.close()
	if n.mux != nil {
		n.mux.close()
	}
	n.dialer.close()
	n.pooled.close()
	return n.pool.Close()
}
