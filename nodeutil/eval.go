package nodeutil

import (
	"context"
	"errors"
	"strings"
	"time"
)

// EvalDetached runs a script call that its caller's end does not cut
// short: evalsha (EVALSHA with the script's digest), and, when the master
// answers NOSCRIPT (noScript; nil means IsNoScript), eval (EVAL with its
// source), one after the other on a goroutine of their own, under a
// context that keeps ctx's values but not its end. The caller returns when
// ctx ends (with ctx's error); the calls go on until they are answered or
// linger past ctx's deadline (past now, when ctx has none). So the EVAL
// fallback of a call whose caller gave up still goes out: a release that a
// master answers NOSCRIPT after the node timeout (a restart, SCRIPT FLUSH)
// still runs. A ctx that has ended already sends nothing.
//
// Use it in a Node whose client cannot finish a call once the caller's
// context ended (a go-redis or rueidis client returns at once, and drops
// the reply). A command that reached the master is never sent again:
// NOSCRIPT means the script did not run.
func EvalDetached(ctx context.Context, linger time.Duration, evalsha, eval func(ctx context.Context) (any, error), noScript func(error) bool) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if noScript == nil {
		noScript = IsNoScript
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
		reply, err := evalsha(dctx)
		if err != nil && noScript(err) {
			reply, err = eval(dctx)
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

// DefaultLinger is how long past its caller's deadline a Node lets a
// detached script call go on (EvalDetached), unless it says otherwise.
const DefaultLinger = 2 * time.Second

// IsNoScript reports whether err is a master's NOSCRIPT error reply, by
// its message.
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
