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
	pf    *prefetchConn // where wait puts what it reads
	buf   [1]byte
	n     int
	err   error
	peek  func(fd uintptr) bool // made once: a closure per check would allocate
	ready func(fd uintptr) bool // wait's read
}

func newIdleChecker(raw net.Conn, tls bool, pf *prefetchConn) *idleChecker {
	c := &idleChecker{tls: tls, pf: pf}
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
		pf := c.pf
		if pf.buf == nil {
			pf.buf = make([]byte, prefetchSize)
		}
		c.n, c.err = syscall.Read(int(fd), pf.buf[pf.tail:])
		if errors.Is(c.err, syscall.EAGAIN) || errors.Is(c.err, syscall.EWOULDBLOCK) || errors.Is(c.err, syscall.EINTR) {
			return false // nothing yet: the runtime waits until the socket is readable
		}
		if c.n > 0 {
			pf.tail += c.n
		}
		return true
	}
	return c
}

// canWait reports whether wait works on this connection: a plain one
// with a file descriptor (under TLS, a readable socket is no reply).
func (c *idleChecker) canWait() bool { return c.rc != nil && !c.tls && c.pf != nil }

// wait waits until the socket has bytes to read and reads them into the
// connection's prefetch buffer, from which the next read takes them; or it
// reports why not: the connection's read deadline passed (nothing was
// read), or the master closed or reset the connection. One goroutine at a
// time may call wait or check: wait the one holding the oldest command
// sent (queue.go), whose reply is due; check the writer, while nothing is
// in flight.
func (c *idleChecker) wait() error {
	if err := c.rc.Read(c.ready); err != nil {
		return err
	}
	n, err := c.n, c.err
	c.err = nil
	switch {
	case err != nil:
		return err
	case n == 0:
		return io.EOF
	}
	return nil
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
