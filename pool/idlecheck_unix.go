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

// idleCheck looks, without blocking and without consuming anything, at a
// connection on which no command is in flight: it returns io.EOF or the
// socket's error when the master closed or reset it (a restart, CLIENT
// KILL, an idle timeout), and errUnasked when bytes nobody asked for wait
// on a plain connection (they would be taken for the next reply). Under
// TLS such bytes are normal (session tickets), so they pass. This is the
// check go-redis makes before it reuses a pooled connection; it costs one
// system call.
func idleCheck(raw net.Conn, tls bool) error {
	sc, ok := raw.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var (
		buf  [1]byte
		n    int
		rerr error
	)
	if err := rc.Read(func(fd uintptr) bool {
		n, _, rerr = syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		return true
	}); err != nil {
		return err
	}
	switch {
	case errors.Is(rerr, syscall.EAGAIN), errors.Is(rerr, syscall.EWOULDBLOCK), errors.Is(rerr, syscall.EINTR):
		return nil
	case rerr != nil:
		return rerr
	case n == 0:
		return io.EOF
	case tls:
		return nil
	default:
		return errUnasked
	}
}
