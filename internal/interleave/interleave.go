// Package interleave names the points at which the library's goroutines
// hand work to each other and where a goroutine descheduled at the wrong
// moment lets another one in: the interleavings that an idle machine all
// but never shows, and a loaded one shows once in a hundred runs. The
// chaos harness stretches these points (it sets what runs there), so that
// its short scenarios meet those interleavings in every run; tests set
// them to drive one interleaving exactly. Nothing runs there otherwise: a
// point costs one atomic load.
package interleave

import "sync/atomic"

var afterOwnWrite atomic.Pointer[func()]

// SetAfterOwnWrite makes f run at AfterOwnWrite, or nothing for nil. It may
// be called at any time, from any goroutine.
func SetAfterOwnWrite(f func()) {
	if f == nil {
		afterOwnWrite.Store(nil)
		return
	}
	afterOwnWrite.Store(&f)
}

// AfterOwnWrite is the point on a caller's goroutine just after it wrote a
// batch holding its own command to a pipelined connection, and before it
// looks for more commands to write: the command's reply may be read, and
// the command completed, while the caller is here, and other callers'
// commands queue behind its write.
func AfterOwnWrite() {
	if f := afterOwnWrite.Load(); f != nil {
		(*f)()
	}
}
