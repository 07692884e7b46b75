// Package pool is one Redis master as quorumlock talks to it: a redigo
// connection pool with timeouts, commands bounded by the caller's context,
// and Lua scripts run with EVALSHA and an EVAL fallback.
//
// A *Node satisfies redlock.Node without this package importing redlock.
//
// Every call honours its context's deadline and cancellation from start to
// finish: borrowing a connection, dialing, the health check and the command
// itself. A frozen master (one that accepts TCP connections but never
// answers, as a SIGSTOPped redis-server does) therefore never holds a caller
// past its deadline; the connection it was using is closed, not reused.
package pool
