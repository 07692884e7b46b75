package nodeutil

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Exec runs a Node's calls over a client library whose commands are built
// from strings (rueidis, valkey-go): Do, Eval and EvalPrepared as
// redlock.Node and redlock.PreparedEvaler want them, given how the client
// sends one command. It keeps the transport rules that a lock's safety
// depends on, so that each adapter does not restate them:
//
//   - A command is sent once: Send must never resend it (nor let its client
//     retry it), and Exec never does.
//   - A script runs by its SHA1 hex digest (EVALSHA), and by its source
//     (EVAL) only after the master answered NOSCRIPT, which means that it
//     did not run. The EVAL goes out even when the caller's context has
//     ended meanwhile (EvalDetached): a release answered NOSCRIPT after
//     its node timeout must still run.
//   - A call returns when its context ends; its command then runs on in
//     the client, under the client's own timeouts (a script call, until
//     Linger past the caller's deadline). The order of the commands does
//     not matter to the locks (package redlock's tombstones).
//
// Set its fields, then use it; it must not be copied after first use. Its
// methods are safe for concurrent use.
type Exec[C any] struct {
	// Name and Addr prefix every error that is not the master's error
	// reply: "rueidis: 127.0.0.1:6379: ...".
	Name, Addr string
	// Client returns the client, made at the first call if need be
	// (Lazy.Get). An error fails the call.
	Client func(ctx context.Context) (C, error)
	// Send builds one command from cmd (its name and the arguments before
	// the keys), keys and args, sends it once on c, and returns its reply:
	// nil for a nil reply, a status or bulk string as a string, an integer
	// as int64, an array as []any, an error reply as an error. ctx has no
	// end: Send is bounded by the client's timeouts. A command the client
	// cannot build (keys in several slots of a cluster client) is an
	// error, with nothing sent.
	Send func(ctx context.Context, c C, cmd, keys, args []string) (any, error)
	// Reply reports whether err is an error reply from the master, and
	// returns it as the Node returns it (with the master's message).
	Reply func(err error) (error, bool)
	// IsNoScript reports whether err, as Reply returned it, is the
	// master's NOSCRIPT error reply.
	IsNoScript func(err error) bool
	// Linger is how long past its caller's deadline a script call goes
	// on (EvalDetached); 0 means DefaultLinger.
	Linger time.Duration
}

// Do sends one command with args formatted by FormatArg, once, and returns
// its reply (see Send). It returns when ctx ends, with an error that
// matches ctx.Err().
//
// A command that would change the state of the client's shared
// connections (MULTI, SELECT, CLIENT REPLY, ...) or block them (BLPOP, ...)
// is refused before anything is sent (CheckShared): a client whose
// commands are built from strings pipelines them on shared connections.
func (e *Exec[C]) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	if err := CheckShared(cmd, args, true); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", e.Name, e.Addr, err)
	}
	all := make([]string, 0, 1+len(args))
	return e.run(ctx, AppendArgs(append(all, cmd), args), nil, nil)
}

// Eval runs the Lua script src by its SHA1 hex digest hash (EVALSHA), and
// sends its source (EVAL) only when the master answers NOSCRIPT. Replies
// as for Do.
func (e *Exec[C]) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	return e.eval(ctx, hash, src, keys, AppendArgs(make([]string, 0, len(args)), args))
}

// EvalPrepared is Eval with the EVALSHA argument list built by the caller:
// the script's SHA1 hex digest, the number of keys, the keys, then the
// arguments (SplitPrepared). It only reads cmdArgs.
func (e *Exec[C]) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	hash, keys, args, err := SplitPrepared(cmdArgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", e.Name, e.Addr, err)
	}
	return e.eval(ctx, hash, src, keys, args)
}

func (e *Exec[C]) eval(ctx context.Context, hash, src string, keys, args []string) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, e.wrap(ctx, err) // never sent
	}
	c, err := e.Client(ctx)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	linger := e.Linger
	if linger <= 0 {
		linger = DefaultLinger
	}
	nkeys := strconv.Itoa(len(keys))
	reply, err := EvalDetached(ctx, linger,
		func(ctx context.Context) (any, error) {
			return e.Send(ctx, c, []string{"EVALSHA", hash, nkeys}, keys, args)
		},
		func(ctx context.Context) (any, error) {
			return e.Send(ctx, c, []string{"EVAL", src, nkeys}, keys, args)
		},
		func(err error) bool { rerr, ok := e.Reply(err); return ok && e.IsNoScript(rerr) })
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	return reply, nil
}

// run sends one command and waits for its reply or ctx; the command goes
// on in the client when ctx ends first. A command is not sent when ctx has
// ended before.
func (e *Exec[C]) run(ctx context.Context, cmd, keys, args []string) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, e.wrap(ctx, err)
	}
	c, err := e.Client(ctx)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	type outcome struct {
		reply any
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		reply, err := e.Send(context.WithoutCancel(ctx), c, cmd, keys, args)
		done <- outcome{reply, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			return nil, e.wrap(ctx, o.err)
		}
		return o.reply, nil
	case <-ctx.Done():
		return nil, e.wrap(ctx, ctx.Err())
	}
}

// wrap returns an error reply as Reply makes it, and prefixes any other
// error with the Node's name and address; an error of an ended ctx stays
// matchable.
func (e *Exec[C]) wrap(ctx context.Context, err error) error {
	if rerr, ok := e.Reply(err); ok {
		return rerr
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return fmt.Errorf("%s: %s: %w: %w", e.Name, e.Addr, cerr, err)
	}
	return fmt.Errorf("%s: %s: %w", e.Name, e.Addr, err)
}
