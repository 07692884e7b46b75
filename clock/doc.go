// Package clock is the time seam of quorumlock: the monotonic clock a Locker
// measures elapsed time with, the clock-drift allowance of the Redlock
// validity formula, and clocks that run fast, slow or jump, which the chaos
// harness uses to reproduce what happens when the client's clock misbehaves.
//
// Only the client's clock is modelled here. A Redis server whose clock jumps
// expires keys early or late; the chaos harness emulates that on the server.
package clock
