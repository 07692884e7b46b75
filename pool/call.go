package pool

import (
	"context"
	"errors"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// A call through the pipelined connection: what the Node's methods submit,
// and how each command ends. A Do caller waits for its reply or its
// context, whichever is first; an asynchronous call returns at once, and
// its completion runs on whichever goroutine completes the command (the
// reader's, a writer's, a dial's, or the caller's before it returns), so it
// must not block. Every command completes: by its reply, by its
// connection's failure (within the stall timeout of its write), or at
// Node.Close.
//
// A command that may have reached the master is never sent again: the
// master may have run it and lost only the reply (a crash after the AOF
// fsync, CLIENT KILL, a middlebox reset), and a reentrant release run
// twice hands the lock to another owner. Its caller gets the error: a
// failed call is a failed vote. Only a command that provably never left
// this process (a notSentError: found unwritten on a connection that
// failed, or a batch whose idle check found the connection closed) goes
// out on a fresh connection (resend). An EVALSHA answered NOSCRIPT ran
// nothing, and goes again as EVAL, also when its caller gave up.

// maxUnsent bounds how often one command is taken to a fresh connection
// after it found the previous one dead before it was written.
const maxUnsent = 2

// do sends one command and waits for its reply or for ctx. It goes out
// once at most (see resend); an EVALSHA with src falls back to EVAL.
func (m *mux) do(ctx context.Context, cmd string, args []any, src string) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // never sent: a call whose context ended sends nothing
	}
	return m.await(newRequest(ctx, cmd, args, src, nil))
}

// await sends r, a waiting caller's request, and waits for its reply or
// for r.ctx.
func (m *mux) await(r *request) (any, error) {
	m.submit(r)
	select {
	case <-r.ch:
		return r.recycle()
	case <-r.ctx.Done():
		return nil, r.ctx.Err()
	}
}

// start sends one command and returns at once; done.Complete runs once
// with the reply. ctx bounds only the wait for a connection.
func (m *mux) start(ctx context.Context, cmd string, args []any, src string, done Completion) {
	if err := ctx.Err(); err != nil {
		done.Complete(nil, m.wrap(err)) // never sent
		return
	}
	m.submit(newRequest(ctx, cmd, args, src, done))
}

// finish completes r with reply and err, unless r goes out again: an
// EVALSHA the master did not know, as EVAL, or a command that was never
// sent, on a fresh connection (resend).
func (m *mux) finish(r *request, reply any, err error) {
	if r.src != "" && isNoScript(err) {
		// NOSCRIPT: the master ran nothing; send the source, also when
		// the caller gave up: every script redlock sends may land late
		// (a release must), and the EVAL must go out even then. It is no
		// resend, and not bound by the caller's context any more.
		r.cmd, r.args, r.src = "EVAL", nodeutil.EvalArgs(r.src, r.args), ""
		r.size = sizeOf(r.cmd, r.args)
		r.fallback = true
		m.submit(r)
		return
	}
	if m.resend(r, err) {
		return
	}
	if r.done == nil {
		r.reply, r.err = reply, err
		r.ch <- struct{}{}
		return
	}
	done := r.done
	r.free()
	done.Complete(reply, m.wrap(err))
}

// resend takes r to a fresh connection when it provably never left this
// process, and reports whether it did.
func (m *mux) resend(r *request, err error) bool {
	if err == nil {
		return false
	}
	var notSent notSentError
	if r.tries < maxUnsent && errors.As(err, &notSent) && r.ended() == nil {
		r.tries++
		m.submit(r)
		return true
	}
	return false
}
