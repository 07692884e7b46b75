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
// Calls also complete by callback (DoAsync, EvalPreparedAsync: the
// redlock.AsyncNode ability): the pipelined connection's reader completes
// each command as its reply arrives, so a caller that fans out to many
// masters needs no goroutine per master, and a frozen master costs pending
// commands, not goroutines. A caller whose command goes out alone on an
// idle connection reads the reply itself, as a Do caller or as the fan-out
// that waits for its only call (quorum.Async over one master), which saves
// a goroutine hand-off per round trip; replies are still read by one
// goroutine at a time, in the order the commands were written.
//
// Every call honours its context's deadline and cancellation: the wait for
// a connection, and the reply. A frozen master
// (one that accepts TCP connections but never answers, as a SIGSTOPped
// redis-server does) therefore never holds a caller past its deadline. A
// pooled connection whose command was cut short is closed, not reused; a
// pipelined connection stays in step (the late reply is read and dropped)
// until it stalls for Config.StallTimeout, and is then replaced.
//
// The transport rules that a lock's safety depends on:
//
//   - A command is sent once at most. When a connection breaks after a
//     command was written to it, the master may have run it and lost only
//     the reply; the call fails (a failed vote), it is never sent again, in
//     either mode. The EVAL fallback after a NOSCRIPT reply is no resend:
//     NOSCRIPT means the script did not run. On the pipelined connection it
//     goes only while the caller still waits, since it runs behind what was
//     written meanwhile, and the first call of each script on a connection
//     goes as EVAL at once, so that a restarted master (whose script cache
//     is empty) never answers NOSCRIPT. Before a command is written to a
//     connection on which nothing is in flight and that gave no reply for
//     a millisecond, the connection is checked (one non-blocking peek at
//     the socket, on Unix systems): one the master closed while idle, as a
//     restart does, is replaced before the command goes out, so a restart
//     while idle costs no failed call.
//   - Commands that change the state of a connection (MULTI, EXEC, WATCH,
//     SELECT, RESET, HELLO, AUTH, QUIT, the SUBSCRIBE and UNSUBSCRIBE
//     families, MONITOR, READONLY, READWRITE, CLIENT REPLY, CLIENT TRACKING,
//     ...) are refused with ErrConnState before anything is sent, in both
//     modes: connections are shared, at once or in turn, and the change
//     would reach other callers. Blocking commands (BLPOP, XREAD BLOCK,
//     WAIT, ...) are refused with ErrBlocking on the pipelined connection,
//     whose other callers they would hold up; Config.Pooled runs them.
//   - Connection set-up (connect, TLS, AUTH, SELECT) has its own timeout,
//     Config.DialTimeout, and does not end with the call that started it:
//     that call waits for it only until its own context ends (a 50ms node
//     timeout over a 30ms link fails fast), and the connection then serves
//     the next calls. One set-up runs at a time per Node; a failed one is
//     reported to the calls waiting for it. In Pooled mode a connection set
//     up for a call that gave up is kept for the next call that needs a new
//     one. Close cancels a set-up in progress and waits for it.
package pool
