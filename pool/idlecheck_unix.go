//go:build aix || darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || solaris

package pool

import (
	"errors"
	"io"
	"net"
	"syscall"
)

// errUnasked is idleCheck's error for bytes waiting on an idle connection.
var errUnasked = errors.New("bytes from the master while no command was in flight")

// idleChecker looks, without blocking and without consuming anything, at a
// connection on which no command is in flight: check returns io.EOF or the
// socket's error when the master closed or reset it (a restart, CLIENT
// KILL, an idle timeout), and errUnasked when bytes nobody asked for wait
// on a plain connection (they would be taken for the next reply). Under
// TLS such bytes are normal (session tickets), so they pass. This is the
// check go-redis makes before it reuses a pooled connection; it costs one
// system call and, after the first, no allocation. One goroutine at a
// time may call check (the connection's writer, or its pooled user).
type idleChecker struct {
	rc    syscall.RawConn // nil when the connection has no file descriptor
	tls   bool
	buf   [1]byte
	n     int
	err   error
	peek  func(fd uintptr) bool // made once: a closure per check would allocate
	ready func(fd uintptr) bool // peek that waits for a byte (see wait)
}

func newIdleChecker(raw net.Conn, tls bool) *idleChecker {
	c := &idleChecker{tls: tls}
	if sc, ok := raw.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			c.rc = rc
		}
	}
	c.peek = func(fd uintptr) bool {
		c.n, _, c.err = syscall.Recvfrom(int(fd), c.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}
	c.ready = func(fd uintptr) bool {
		c.n, _, c.err = syscall.Recvfrom(int(fd), c.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return !errors.Is(c.err, syscall.EAGAIN) && !errors.Is(c.err, syscall.EWOULDBLOCK) && !errors.Is(c.err, syscall.EINTR)
	}
	return c
}

// canWait reports whether wait works on this connection: a plain one
// with a file descriptor (under TLS, a readable socket is no reply).
func (c *idleChecker) canWait() bool { return c.rc != nil && !c.tls }

// wait waits, without consuming anything, until the socket has bytes to
// read or an error (a closed or reset connection), or until the
// connection's read deadline. One goroutine at a time may call wait or
// check, and only while nobody reads the connection.
func (c *idleChecker) wait() error {
	err := c.rc.Read(c.ready)
	c.err = nil
	return err
}

func (c *idleChecker) check() error {
	if c.rc == nil {
		return nil
	}
	if err := c.rc.Read(c.peek); err != nil { // the read deadline is cleared (see conn.checkIdle)
		return err
	}
	n, rerr := c.n, c.err
	c.err = nil
	switch {
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK), errors.Is(rerr, syscall.EINTR):
		return nil
	case rerr != nil:
		return rerr
	case n == 0:
		return io.EOF
	case c.tls:
		return nil
	default:
		return errUnasked
	}
}
