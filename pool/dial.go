package pool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Connection set-up (TCP connect, TLS, AUTH, SELECT) runs on its own,
// bounded by Config.DialTimeout and by the Node's life, never by the
// context of the call that needed the connection: a per-call timeout of
// 50ms must not make a connection over a 30ms link impossible. Callers wait
// for the dial or for their own context, whichever ends first; a caller
// that gives up leaves the dial running, and the connection it makes serves
// the next callers. A failed dial is reported to the callers that waited
// for it, and the next call dials anew. The pipelined connection is dialed
// once at a time (dialer); the Pooled mode dials as many connections at
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
	pf   *prefetchConn // over raw: what redigo reads from
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
	return c.checker().check()
}

func (c *conn) checker() *idleChecker {
	if c.idle == nil {
		c.idle = newIdleChecker(c.raw, c.tls, c.pf)
	}
	return c.idle
}

// dial makes one connection for cfg, bounded by ctx and cfg.DialTimeout,
// and notes the master's identity in id (identity.go).
func dial(ctx context.Context, cfg Config, id *identity) (*conn, error) {
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
			c.raw, c.pf = raw, &prefetchConn{Conn: raw}
			return c.pf, nil
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

// dialer runs the dials of a Node's pipelined connection, one at a time,
// independently of the callers (the Pooled mode's are in pooldial.go).
type dialer struct {
	cfg    Config
	id     *identity
	ctx    context.Context // ends with the Node: cancels a dial in progress
	cancel context.CancelFunc
	// land takes a finished connection (the pipelined side installs it).
	// An error closes it.
	land func(c *conn) error

	mu     sync.Mutex
	cur    *dialAttempt // the dial in progress, nil when none
	closed bool
	wg     sync.WaitGroup
}

// dialAttempt is one dial; err is set before done is closed.
type dialAttempt struct {
	done chan struct{}
	err  error
}

func newDialer(cfg Config, id *identity) *dialer {
	ctx, cancel := context.WithCancel(context.Background())
	return &dialer{cfg: cfg, id: id, ctx: ctx, cancel: cancel}
}

// attempt returns the dial in progress, starting one if there is none.
func (d *dialer) attempt() (*dialAttempt, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, errNodeClosed
	}
	if d.cur == nil {
		a := &dialAttempt{done: make(chan struct{})}
		d.cur = a
		d.wg.Go(func() { d.run(a) })
	}
	return d.cur, nil
}

// run dials once and hands the connection to land.
func (d *dialer) run(a *dialAttempt) {
	c, err := dial(d.ctx, d.cfg, d.id)
	if d.ctx.Err() != nil && err != nil {
		err = errNodeClosed
	}
	if err == nil {
		if err = d.land(c); err != nil {
			c.Close()
		}
	}
	d.mu.Lock()
	d.cur = nil
	a.err = err
	d.mu.Unlock()
	close(a.done)
}

// close cancels a dial in progress and waits for it.
func (d *dialer) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
}
