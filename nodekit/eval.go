package nodekit

import (
	"context"
	"errors"
	"strings"
	"time"
)

// Runner runs one command on the Node's client and returns its reply.
type Runner func(ctx context.Context, cmd string, args []any) (any, error)

// EvalDetached runs a script by its digest with run: EVALSHA with cmdArgs
// (the digest, the number of keys, the keys, the arguments), and, when the
// master answers NOSCRIPT, EVAL with src in the digest's place. It runs on
// a goroutine of its own, under a context that keeps ctx's values but not
// its end: the caller returns when ctx ends (with ctx's error), and the
// call goes on until it is answered or linger past ctx's deadline (past
// now, when ctx has none). So the EVAL fallback of a call whose caller gave
// up still goes out: a release that a master answers NOSCRIPT after the
// node timeout (a restart, SCRIPT FLUSH) still runs. A ctx that has ended
// already sends nothing.
//
// Use it in a Node whose client cannot finish a call once the caller's
// context ended (a go-redis or rueidis client returns at once, and drops
// the reply). A command that reached the master is never sent again:
// NOSCRIPT means the script did not run.
func EvalDetached(ctx context.Context, linger time.Duration, run Runner, src string, cmdArgs []any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	bound := time.Now()
	if dl, ok := ctx.Deadline(); ok {
		bound = dl
	}
	dctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), bound.Add(linger))
	type outcome struct {
		reply any
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		defer cancel()
		reply, err := run(dctx, "EVALSHA", cmdArgs)
		if IsNoScript(err) {
			reply, err = run(dctx, "EVAL", EvalArgs(src, cmdArgs))
		}
		done <- outcome{reply, err}
	}()
	select {
	case o := <-done:
		return o.reply, o.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// IsNoScript reports whether err is a master's NOSCRIPT error reply.
func IsNoScript(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if strings.HasPrefix(err.Error(), "NOSCRIPT") {
			return true
		}
	}
	return false
}

// EvalArgs turns an EVALSHA argument list (digest, key count, keys,
// arguments) into EVAL's, with src in the digest's place, in a new slice:
// the list may be shared by other Nodes' calls.
func EvalArgs(src string, shaArgs []any) []any {
	args := make([]any, len(shaArgs))
	args[0] = src
	copy(args[1:], shaArgs[1:])
	return args
}
