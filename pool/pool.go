package pool

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
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
	// ReadTimeout and WriteTimeout bound each command's read and write; 0
	// means no bound beyond the caller's context, which is how quorumlock
	// uses them (the per-node timeout arrives as a context deadline).
	ReadTimeout  time.Duration
	WriteTimeout time.Duration

	// MaxIdle is the number of idle connections kept; 0 means 64.
	MaxIdle int
	// MaxActive caps open connections; 0 means no cap. At the cap, callers
	// wait for a free connection until their context ends.
	MaxActive int
	// IdleTimeout closes connections idle for longer; 0 means 5 minutes.
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
	// commands on it; the next call dials anew. 0 means 1 second.
	StallTimeout time.Duration

	// HealthCheckAfter makes the pool PING a connection that has been idle
	// for longer than this before handing it out (bounded by the caller's
	// context); 0 means 10 seconds, a negative value turns the check off.
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
	addr   string
	cfg    Config
	dialer *dialer // connection set-up, see dial.go
	pool   *redis.Pool
	notify notifier // the pub/sub side, see pubsub.go
	mux    *mux     // the pipelined side, nil with Config.Pooled; see mux.go

	stallTimeout time.Duration
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
	n := &Node{addr: cfg.Addr, cfg: cfg, dialer: newDialer(cfg), stallTimeout: cfg.StallTimeout}
	if !cfg.Pooled {
		n.mux = &mux{n: n}
		n.dialer.land = n.mux.install
	}
	n.pool = &redis.Pool{
		DialContext: n.dialer.take,
		MaxIdle:     cfg.MaxIdle,
		MaxActive:   cfg.MaxActive,
		IdleTimeout: cfg.IdleTimeout,
		Wait:        true,
	}
	if cfg.HealthCheckAfter > 0 {
		n.pool.TestOnBorrowContext = func(ctx context.Context, c redis.Conn, lastUsed time.Time) error {
			if err := c.(*conn).idle(); err != nil {
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
			return c.(*conn).idle()
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
func (n *Node) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	reply, err := n.do(ctx, "EVALSHA", cmdArgs)
	if isNoScript(err) {
		withSrc := append([]any{src}, cmdArgs[1:]...)
		reply, err = n.do(ctx, "EVAL", withSrc)
	}
	return reply, n.wrap(ctx, err)
}

// do sends one command through the pipeline, or on a pooled connection.
func (n *Node) do(ctx context.Context, cmd string, args []any) (any, error) {
	if n.mux != nil {
		return n.mux.do(ctx, cmd, args)
	}
	c, err := n.pool.GetContext(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return redis.DoContext(c, ctx, cmd, args...)
}

func isNoScript(err error) bool {
	rerr, ok := err.(redis.Error)
	return ok && strings.HasPrefix(string(rerr), "NOSCRIPT")
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

// Stats returns the connection counts.
func (n *Node) Stats() Stats {
	s := n.pool.Stats()
	st := Stats{Active: s.ActiveCount, Idle: s.IdleCount}
	if n.mux != nil && n.mux.active() {
		st.Active++
	}
	return st
}

// Close closes the idle connections, cancels a connection set-up in
// progress and waits for it, and makes later calls fail; connections in use
// are closed when their calls end.
func (n *Node) Close() error {
	n.notify.close() // the pub/sub connection and its goroutines
	if n.mux != nil {
		n.mux.close()
	}
	n.dialer.close()
	return n.pool.Close()
}
