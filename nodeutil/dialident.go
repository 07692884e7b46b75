package nodeutil

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// The master's identity, read on every connection that a client library
// dials, before the library sends anything on it: ClientNode's Open puts
// a dialReader in front of the client's dial function (rueidis's and
// valkey-go's ClientOption.DialCtxFn). It authenticates as the library
// would (AUTH with the client's credentials), sends IdentityCommands, and
// hands the connection over once the replies are read: so the newest
// connection's reading is always noted before any reply that the
// connection carries, and Identity knows the process behind every reply
// the Node returns.
//
// A Sentinel client also dials the Sentinels, whose connections must not
// be noted (a Sentinel is not the master) and which may take other
// credentials. The library dials them with a copy of its options made for
// the Sentinels (their Dialer, TLS and credentials), so every Sentinel
// connection comes with one *net.Dialer and every master connection with
// another; and it asks a Sentinel for the master before it dials the
// master, so the first dialer a Sentinel client uses is the Sentinels'.
// The dialReader takes it for theirs and leaves the connections dialed
// with it alone. Should a library ever dial the master first, its
// connections would be left unread (Identity unknown: the restart guard
// refuses the master's grants, loudly) and a Sentinel's read as a master's,
// where INFO's redis_mode:sentinel keeps it from being noted.

// defaultDialTimeout bounds the identity's reading when the dialer has no
// timeout: rueidis's and valkey-go's default dial timeout.
const defaultDialTimeout = 5 * time.Second

// dialFunc is a client's DialCtxFn.
type dialFunc = func(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error)

// dialReader reads the master's identity on each connection a client
// dials, and notes it in ident. Make one per client: it learns which
// dialer is the Sentinels'.
type dialReader struct {
	ident *Identity
	next  dialFunc // the client's own dial
	// creds returns the user and password to authenticate with on a
	// connection to addr; nil when the client has none.
	creds    func(addr net.Addr) (user, password string, err error)
	sentinel bool // a Sentinel client: its first dialer is the Sentinels'

	mu        sync.Mutex
	sentinels *net.Dialer // the Sentinels' dialer, once seen
}

// dial is the client's DialCtxFn.
func (w *dialReader) dial(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
	c, err := w.next(ctx, dst, d, tc)
	if err != nil || w.isSentinel(d) {
		return c, err
	}
	timeout := defaultDialTimeout
	if d != nil && d.Timeout > 0 {
		timeout = d.Timeout
	}
	if err := w.read(ctx, c, timeout); err != nil {
		c.Close()
		return nil, fmt.Errorf("nodeutil: reading the identity of %s on a new connection: %w", dst, err)
	}
	return c, nil
}

// isSentinel reports whether a connection dialed with d is a Sentinel's.
func (w *dialReader) isSentinel(d *net.Dialer) bool {
	if !w.sentinel {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.sentinels == nil {
		w.sentinels = d
	}
	return d == w.sentinels
}

// read authenticates on c, reads the identity and notes it, within
// timeout or ctx's deadline, whichever comes first. An error reply to INFO
// is a refusal (noted), one to AUTH an error; a transport error fails the
// connection.
func (w *dialReader) read(ctx context.Context, c net.Conn, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	if err := c.SetDeadline(deadline); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	cmds := IdentityCommands
	if w.creds != nil {
		user, password, err := w.creds(c.RemoteAddr())
		if err != nil {
			stop()
			return err
		}
		if auth := authCommand(user, password); auth != nil {
			cmds = append([][]string{auth}, cmds...)
		}
	}
	replies, errs, err := respRound(c, cmds)
	if !stop() {
		// ctx ended, and its deadline may be set on c at any moment: c
		// is not handed over.
		return errors.Join(ctx.Err(), err)
	}
	if err != nil {
		return err
	}
	if len(cmds) > len(IdentityCommands) {
		if errs[0] != nil {
			return fmt.Errorf("AUTH: %w", errs[0])
		}
		replies, errs = replies[1:], errs[1:]
	}
	if err := c.SetDeadline(time.Time{}); err != nil {
		return err
	}
	w.note(replies, errs)
	return nil
}

// note notes the replies to IdentityCommands: a refusal of INFO server,
// a Sentinel's INFO (not noted), or the reading.
func (w *dialReader) note(replies []any, errs []error) {
	if errs[0] != nil {
		w.ident.Refused(errs[0])
		return
	}
	server, _ := replies[0].(string)
	if InfoField(server, "redis_mode") == "sentinel" {
		return
	}
	persistence, _ := replies[1].(string)
	var fsync string
	if kv, ok := replies[2].([]any); ok && len(kv) == 2 {
		fsync, _ = kv[1].(string)
	}
	if !w.ident.Note(server, persistence, fsync) {
		w.ident.Refused(errors.New("INFO server names no run_id"))
	}
}

// authCommand is the AUTH command for user and password, nil when there
// is nothing to authenticate with.
func authCommand(user, password string) []string {
	switch {
	case user == "" && password == "":
		return nil
	case user == "":
		return []string{"AUTH", password}
	}
	return []string{"AUTH", user, password}
}

// defaultDial is how rueidis and valkey-go dial when ClientOption has no
// dial function: TLS when there is a TLS configuration.
func defaultDial(ctx context.Context, dst string, d *net.Dialer, tc *tls.Config) (net.Conn, error) {
	if d == nil {
		d = &net.Dialer{}
	}
	if tc != nil {
		td := tls.Dialer{NetDialer: d, Config: tc}
		return td.DialContext(ctx, "tcp", dst)
	}
	return d.DialContext(ctx, "tcp", dst)
}
