//go:build !(aix || darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || solaris)

package pool

import (
	"errors"
	"net"
)

// idleChecker is not available on this platform: a connection the master
// closed while idle is found out by the command written on it, which then
// fails (it is never sent again).
type idleChecker struct{}

func newIdleChecker(net.Conn, bool, *prefetchConn) *idleChecker { return &idleChecker{} }

func (*idleChecker) check() error { return nil }

// canWait reports false: a caller cannot wait for its reply itself here.
func (*idleChecker) canWait() bool { return false }

func (*idleChecker) wait() error { return errors.ErrUnsupported }
