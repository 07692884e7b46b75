// Package nodeutil holds what an implementation of redlock.Node needs
// beyond its Redis client and wake on release (package pubsub), so that
// *pool.Node, the adapters in this repository, and one written elsewhere
// share it instead of copying it:
//
//   - the transport rules that a lock's safety depends on, kept once:
//     CheckShared refuses, before anything is sent, a command that would
//     change the state of a connection other callers share (MULTI, SELECT,
//     CLIENT REPLY, SUBSCRIBE, ...) or block it (BLPOP, XREAD BLOCK, ...),
//     judging each argument by the text it goes on the wire as (WireText);
//     EvalDetached runs a script call whose EVAL fallback after NOSCRIPT
//     goes out also when the caller stopped waiting, as a release answered
//     late must, and Detached is the same for a Node that builds its own
//     call (three allocations a call: the call, its goroutine, the
//     channel its caller waits on); Exec does all of it for a client whose
//     commands are built from strings (rueidis, valkey-go);
//   - durable grants' group commit (Committer: one probe write and one
//     WAITAOF for every write before it; Durables: redlock.Abilities'
//     Confirm made of them, which refuses a confirmation made by another
//     master process than the grant's, ErrMasterChanged, and whose WAIT
//     keeps a margin before its deadline, ConfirmWait);
//   - the master's process identity read on each new connection
//     (IdentityCommands, Identity, Parse), for the restart guard
//     (redlock.Abilities' Identity) and for Durables;
//   - arguments formatted as redigo (and so *pool.Node) formats them, an
//     error reply's message as the master sent it, the argument list of a
//     prepared script call taken apart, and a client made lazily, so that a
//     Node can be built while its master is down;
//   - a whole Node over a rueidis or valkey-go client (ClientNode, made by
//     NewClientNode over the caller's client or by OpenClientNode with a
//     client of its own): generic over the library's types, which Go
//     infers, so that the two adapters share every line but their
//     pub/sub hooks. OpenClientNode reads the master's identity on every
//     connection its client dials, before the client uses it (AUTH and
//     IdentityCommands over the raw connection, a Sentinel's connections
//     left alone), and confirms durable grants on a dedicated connection
//     (Durables); a Node over the caller's client cannot see its
//     connections, and says so in its Abilities.
//
// The order in which a Node delivers its commands does not matter to the
// locks' safety: a release that overtakes its acquire leaves a tombstone
// that refuses it (see package redlock). redlocktest.TestNode checks the
// rules. Beside the standard library it depends on redlock (for the
// contract's types) and pubsub only.
package nodeutil
