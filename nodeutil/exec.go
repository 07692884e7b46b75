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
//     the client, under the client's own timeouts. A script call's context
//     has a deadline Linger past the caller's, which the client applies to
//     its connection, and no EVAL goes out past it. The order of the
//     commands does not matter to the locks (package redlock's
//     tombstones).
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
	// end (its Done is nil), and a script call's has a deadline: Send is
	// bounded by the client's timeouts. A command the client cannot build
	// (keys in several slots of a cluster client) is an error, with
	// nothing sent.
	Send func(ctx context.Context, c C, cmd, keys, args []string) (any, error)
	// Reply reports whether err is an error reply from the master, and
	// returns it as the Node returns it (with the master's message).
	Reply func(err error) (error, bool)
	// IsNoScript reports whether err, as Reply returned it, is the
	// master's NOSCRIPT error reply.
	IsNoScript func(err error) bool
	// Linger is how long past its caller's deadline a script call goes
	// on: the deadline of Send's context, past which no EVAL goes out
	// (Detached); 0 means DefaultLinger.
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
	j := &execJob[C]{e: e}
	j.cmd = AppendArgs(append(j.buf[:0], cmd), args)
	return e.start(ctx, j)
}

// Eval runs the Lua script src by its SHA1 hex digest hash (EVALSHA), and
// sends its source (EVAL) only when the master answers NOSCRIPT. Replies
// as for Do.
func (e *Exec[C]) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	j := &execJob[C]{e: e, src: src, script: true}
	s := append(j.buf[:0], "EVALSHA", hash, strconv.Itoa(len(keys)))
	s = append(s, keys...)
	j.split(AppendArgs(s, args), len(keys))
	return e.start(ctx, j)
}

// EvalPrepared is Eval with the EVALSHA argument list built by the caller:
// the script's SHA1 hex digest, the number of keys, the keys, then the
// arguments (SplitPrepared). It only reads cmdArgs, and not after it
// returns.
func (e *Exec[C]) EvalPrepared(ctx context.Context, src string, cmdArgs []any) (any, error) {
	j := &execJob[C]{e: e, src: src, script: true}
	s, nkeys, err := appendPrepared(append(j.buf[:0], "EVALSHA"), cmdArgs)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", e.Name, e.Addr, err)
	}
	j.split(s, nkeys)
	return e.start(ctx, j)
}

// start runs j detached (Detached.Run): a script call until Linger past
// ctx's deadline (the client sets its connections' deadlines from the
// context's, and reads nothing else of it: a nil Done costs no timer), a
// plain command under the client's timeouts alone. It returns when ctx
// ends; a command is not sent when ctx has ended before.
func (e *Exec[C]) start(ctx context.Context, j *execJob[C]) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, e.wrap(ctx, err) // never sent
	}
	c, err := e.Client(ctx)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	j.c = c
	linger := time.Duration(-1) // no deadline
	if j.script {
		if linger = e.Linger; linger <= 0 {
			linger = DefaultLinger
		}
	}
	reply, err := j.Run(ctx, j, linger, false)
	if err != nil {
		return nil, e.wrap(ctx, err)
	}
	return reply, nil
}

// execJob is one call of an Exec: its command, built once, in buf when it
// fits, and the Detached it runs as.
type execJob[C any] struct {
	Detached
	e      *Exec[C]
	c      C
	script bool   // EVALSHA, then EVAL after NOSCRIPT
	src    string // the script's source
	// cmd, keys and args are Send's: the command's name and the
	// arguments before the keys (EVALSHA, digest, number of keys; or the
	// whole of a plain command), the keys, the other arguments.
	cmd, keys, args []string
	buf             [12]string
}

// split sets j's command from an EVALSHA line s (EVALSHA, digest, number of
// keys, nkeys keys, arguments). Each part is capped, so that a Send that
// appends to one cannot write over the next.
func (j *execJob[C]) split(s []string, nkeys int) {
	j.cmd, j.keys, j.args = s[:3:3], s[3:3+nkeys:3+nkeys], s[3+nkeys:]
}

// Send sends the command once; a script's EVAL goes after NOSCRIPT, unless
// the call's deadline has passed meanwhile.
func (j *execJob[C]) Send(ctx context.Context) (any, error) {
	e := j.e
	reply, err := e.Send(ctx, j.c, j.cmd, j.keys, j.args)
	if !j.script || err == nil {
		return reply, err
	}
	if rerr, ok := e.Reply(err); !ok || !e.IsNoScript(rerr) {
		return reply, err
	}
	if j.Expired() {
		return nil, context.DeadlineExceeded // past the linger: nothing more goes out
	}
	return e.Send(ctx, j.c, []string{"EVAL", j.src, j.cmd[2]}, j.keys, j.args)
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
