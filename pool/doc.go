// Package pool is one Redis master as quorumlock talks to it: commands
// bounded by the caller's context, Lua scripts run with EVALSHA and an EVAL
// fallback, and a shared pub/sub connection for release announcements.
//
// By default a Node auto-pipelines: the commands of all concurrent callers
// share one connection, and whatever is queued goes out in one write (one
// system call for many callers), which is what makes a lock cycle over
// five masters cheap under concurrency. Config.Pooled switches to a redigo
// connection pool instead, one connection per concurrent call.
//
// A *Node satisfies redlock.Node without this package importing redlock.
//
// Every call honours its context's deadline and cancellation: dialing, the
// wait for a connection or a place in the pipeline, and the reply. A frozen
// master (one that accepts TCP connections but never answers, as a
// SIGSTOPped redis-server does) therefore never holds a caller past its
// deadline. A pooled connection whose command was cut short is closed, not
// reused; a pipelined connection stays in step (the late reply is read and
// dropped) until it stalls for Config.StallTimeout, and is then replaced.
package pool
