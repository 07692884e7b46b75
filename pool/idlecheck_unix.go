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
	rc   syscall.RawConn // nil when the connection has no file descriptor
	tls  bool
	buf  [1]byte
	n    int
	err  error
	peek func(fd uintptr) bool // made once: a closure per check would allocate
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
	return c
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
