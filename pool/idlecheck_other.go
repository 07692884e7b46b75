//go:build !(aix || darwin || dragonfly || freebsd || illumos || linux || netbsd || openbsd || solaris)

package pool

import "net"

// idleCheck is not available on this platform: a connection the master
// closed while idle is found out by the command written on it, which then
// fails (it is never sent again).
func idleCheck(net.Conn, bool) error { return nil }
