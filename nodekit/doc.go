// Package nodekit holds what every implementation of redlock.Node needs
// beyond its Redis client, so that an adapter (in this repository or
// outside it) writes none of it again:
//
//   - CheckShared refuses, before anything is sent, a command that would
//     change the state of a connection that other callers share (MULTI,
//     SELECT, CLIENT REPLY, SUBSCRIBE, ...) or block it (BLPOP, XREAD
//     BLOCK, ...), judging each argument by the text that goes on the wire,
//     whatever its Go type (WireText).
//   - EvalDetached runs a script call (EVALSHA, then EVAL after NOSCRIPT)
//     that the caller's end does not cut short: a Node must send the EVAL
//     fallback also when the caller stopped waiting, for a release that
//     comes back NOSCRIPT after the node timeout must still run.
//
// The rules behind both are the library's transport rules (the package
// documentation of redlock, and redlocktest.TestNode, which checks them).
package nodekit
