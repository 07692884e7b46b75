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
// context that keeps ctx's values but not its end (a Detached with a
// timer). The caller returns when ctx ends (with ctx's error); the calls
// go on until they are answered or linger past ctx's deadline (past now,
// when ctx has none), when their context's Done closes. So the EVAL
// fallback of a call whose caller gave up still goes out: a release that
// a master answers NOSCRIPT after the node timeout (a restart, SCRIPT
// FLUSH) still runs. A ctx that has ended already sends nothing; nor does
// eval go out once the deadline passed.
//
// Use it in a Node whose client cannot finish a call once the caller's
// context ended (a go-redis or rueidis client returns at once, and drops
// the reply). A command that reached the master is never sent again:
// NOSCRIPT means the script did not run. A Node that builds its commands
// itself can save the closures: embed a Detached in a Job of its own, as
// Exec does.
func EvalDetached(ctx context.Context, linger time.Duration, evalsha, eval func(ctx context.Context) (any, error), noScript func(error) bool) (any, error) {
	if noScript == nil {
		noScript = IsNoScript
	}
	j := &evalFuncs{evalsha: evalsha, eval: eval, noScript: noScript}
	return j.Run(ctx, j, linger, true)
}

// evalFuncs is EvalDetached's Job.
type evalFuncs struct {
	Detached
	evalsha, eval func(ctx context.Context) (any, error)
	noScript      func(error) bool
}

func (j *evalFuncs) Send(ctx context.Context) (any, error) {
	reply, err := j.evalsha(ctx)
	if err == nil || !j.noScript(err) {
		return reply, err
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, cerr // past the linger: nothing more goes out
	}
	return j.eval(ctx)
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
