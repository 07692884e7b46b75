package pool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// Connection set-up (TCP connect, TLS, AUTH, SELECT) runs on its own,
// bounded by Config.DialTimeout and by the Node's life, never by the
// context of the call that needed the connection: a per-call timeout of
// 50ms must not make a connection over a 30ms link impossible. Callers wait
// for the dial or for their own context, whichever ends first; a caller
// that gives up leaves the dial running, and the connection it makes serves
// the next callers. A failed dial is reported to the callers that waited
// for it, and the next call dials anew. The pipelined connection is dialed
// once at a time (dialer, mux.go); the Pooled mode dials as many connections at
// once as callers wait for one (pooledDialer, pooldial.go). Node.Close
// cancels the dials in progress and waits for them.

// keepAlive is the TCP keep-alive period, redigo's default.
const keepAlive = 5 * time.Minute

// conn is a dialed connection and the TCP socket under it (under TLS, if
// any), which its idleChecker looks at. It forwards redigo's optional interfaces
// (ConnWithTimeout, ConnWithContext), which embedding alone would hide.
type conn struct {
	redis.Conn
	raw  net.Conn
	tls  bool
	idle *idleChecker // made at the first check
	// runID is the master's run id as the connection's set-up read it
	// ("" when unknown): durable confirmations must come from the master
	// process that took the writes (durable.go).
	runID string
}

// DoContext implements redis.ConnWithContext.
func (c *conn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

// ReceiveContext implements redis.ConnWithContext.
func (c *conn) ReceiveContext(ctx context.Context) (any, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

// DoWithTimeout implements redis.ConnWithTimeout.
func (c *conn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	return redis.DoWithTimeout(c.Conn, timeout, cmd, args...)
}

// ReceiveWithTimeout implements redis.ConnWithTimeout.
func (c *conn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(c.Conn, timeout)
}

// checkIdle reports an error when the master closed or reset the
// connection while nothing was in flight on it (see idleChecker). One
// goroutine at a time may call it. It clears the read deadline that the
// last read left, which has passed on a connection idle for longer than
// the read timeout, and would fail the look as a timeout (and so the
// connection).
func (c *conn) checkIdle() error {
	if c.raw == nil {
		return nil
	}
	if err := c.raw.SetReadDeadline(time.Time{}); err != nil {
		return err
	}
	if c.idle == nil {
		c.idle = newIdleChecker(c.raw, c.tls)
	}
	return c.idle.check()
}

// writeBy sets the socket's write deadline: a write that cannot go on by
// then fails with a timeout; the zero time sets none.
func (c *conn) writeBy(t time.Time) {
	if c.raw != nil {
		c.raw.SetWriteDeadline(t)
	}
}

// dial makes one connection for cfg, bounded by ctx and cfg.DialTimeout,
// and notes the master's identity in id (identity.go).
func dial(ctx context.Context, cfg Config, id *nodeutil.Identity) (*conn, error) {
	if cfg.Addr == "" {
		return nil, ErrNoAddr
	}
	c := &conn{tls: cfg.TLS != nil}
	nd := net.Dialer{Timeout: cfg.DialTimeout, KeepAlive: keepAlive}
	opts := []redis.DialOption{
		redis.DialContextFunc(func(ctx context.Context, network, addr string) (net.Conn, error) {
			raw, err := nd.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			c.raw = raw
			return raw, nil
		}),
		redis.DialReadTimeout(cfg.ReadTimeout),
		redis.DialWriteTimeout(cfg.WriteTimeout),
		redis.DialDatabase(cfg.DB),
	}
	if cfg.Password != "" {
		opts = append(opts, redis.DialPassword(cfg.Password), redis.DialUsername(cfg.Username))
	}
	if cfg.TLS != nil {
		opts = append(opts, redis.DialUseTLS(true), redis.DialTLSConfig(cfg.TLS))
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	rc, err := redis.DialContext(ctx, "tcp", cfg.Addr, opts...)
	if err == nil {
		if c.runID, err = identify(ctx, rc, id); err != nil {
			rc.Close()
		}
	}
	if err != nil {
		cerr := ctx.Err()
		if dl, ok := ctx.Deadline(); ok && cerr == nil && !time.Now().Before(dl) {
			// AUTH or SELECT read up to the dial's deadline, whose timer
			// may not have marked ctx done yet.
			cerr = context.DeadlineExceeded
		}
		if cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err)
		}
		return nil, fmt.Errorf("dial: %w", err)
	}
	c.Conn = rc
	return c, nil
}

// dialer runs the dials of a Node's pipelined connection, independently
// of the callers (the Pooled mode's are in pooldial.go). Its user starts
// one at a time (mux.wait).
type dialer struct {
	cfg    Config
	id     *nodeutil.Identity
	ctx    context.Context // ends with the Node: cancels a dial in progress
	cancel context.CancelFunc
	// land takes each dial's outcome, on the dial's goroutine: the
	// connection, which it owns then, or the error.
	land func(c *conn, err error)

	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

func newDialer(cfg Config, id *nodeutil.Identity) *dialer {
	ctx, cancel := context.WithCancel(context.Background())
	return &dialer{cfg: cfg, id: id, ctx: ctx, cancel: cancel}
}

// start starts a dial, which ends in land; it fails once the dialer is
// closed.
func (d *dialer) start() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errNodeClosed
	}
	d.wg.Go(func() {
		c, err := dial(d.ctx, d.cfg, d.id)
		if d.ctx.Err() != nil && err != nil {
			err = errNodeClosed
		}
		d.land(c, err)
	})
	return nil
}

// close cancels a dial in progress and waits for it.
func (d *dialer) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}
