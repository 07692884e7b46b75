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
// A *Node is a redlock.Capable with every ability of redlock.Abilities:
// EvalPrepared, EvalAsync (calls completed by callback: the pipelined
// connection's reader completes each command as its reply arrives, so a
// caller that fans out to many masters needs no goroutine per master, and
// a frozen master costs pending commands, not goroutines; the pipelined
// mode only), Subscribe (wake on release), Identity (the restart guard:
// every new connection reads the master's run id, uptime and persistence)
// and Confirm (durable grants, confirmed on a connection of their own).
//
// How a call ends. A Do or EvalPrepared call returns when its reply comes
// or its context ends, whichever is first; a frozen master (one that
// accepts TCP connections but never answers, as a SIGSTOPped redis-server
// does) never holds a caller past its deadline. What happens to the
// command then differs by mode. On the pipelined connection it stays in
// the pipeline: its reply is read and dropped (the connection stays in
// step) until the connection stalls for Config.StallTimeout and is
// replaced. With Config.Pooled a command is cut short with its connection,
// which is closed, not reused, except a script call, which goes on after
// its caller returned until it is answered or Config.StallTimeout past the
// caller's deadline, so that its EVAL fallback still goes out (see below).
// The asynchronous calls (DoAsync, EvalPreparedAsync) take their context
// only for the wait for a connection: once queued, they complete by their
// reply, their connection's failure, or Node.Close.
//
// The transport rules that a lock's safety depends on:
//
//   - A command is sent once at most. When a connection breaks after a
//     command was written to it, the master may have run it and lost only
//     the reply; the call fails (a failed vote), it is never sent again, in
//     either mode. The EVAL fallback after a NOSCRIPT reply is no resend:
//     NOSCRIPT means the script did not run. It goes out whether or not
//     the caller still waits: every lock script may land late (its
//     tombstone keeps a late acquire from landing after its release), and
//     a release must. The first call of each script on a pipelined
//     connection goes as EVAL at once, so that a restarted master (whose
//     script cache is empty) costs no extra round trip. Before a command
//     is written to a connection on which nothing is in flight and that
//     gave no reply for a millisecond, the connection is checked (one
//     non-blocking peek at the socket, on Unix systems): one the master
//     closed while idle, as a restart does, is replaced before the command
//     goes out, so a restart while idle costs no failed call.
//   - Commands that change the state of a connection (MULTI, EXEC, WATCH,
//     SELECT, RESET, HELLO, AUTH, QUIT, the SUBSCRIBE and UNSUBSCRIBE
//     families, MONITOR, READONLY, READWRITE, CLIENT REPLY, CLIENT TRACKING,
//     ...) are refused with ErrConnState before anything is sent, in both
//     modes, judged by the text their arguments go on the wire as:
//     connections are shared, at once or in turn, and the change would
//     reach other callers. Blocking commands (BLPOP, XREAD BLOCK, WAIT,
//     ...) are refused with ErrBlocking on the pipelined connection, whose
//     other callers they would hold up; Config.Pooled runs them.
//   - Connection set-up (connect, TLS, AUTH, SELECT, and the identity
//     reading) has its own timeout, Config.DialTimeout, and does not end
//     with the call that started it: that call waits for it only until its
//     own context ends (a 50ms node timeout over a 30ms link fails fast),
//     and the connection then serves the next calls. One set-up runs at a
//     time per Node; a failed one is reported to the calls waiting for it.
//     In Pooled mode a connection set up for a call that gave up is kept
//     for the next call that needs a new one. Close cancels a set-up in
//     progress and waits for it.
package pool
