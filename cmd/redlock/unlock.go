package main

import (
	"context"
	"crypto/sha1"
	_ "embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

const unlockUsage = `usage: redlock unlock [flags] KEY (--token TOKEN | --force)

Release KEY on every master.

  --token TOKEN  remove only TOKEN's hold (compare-and-delete): a plain or
                 fenced lock with that token, a reentrant lock's owner TOKEN
                 (all its holds), a read-write lock's writer or reader
  --force        remove KEY's lock keys whoever holds them: KEY, {KEY}:w,
                 {KEY}:r and {KEY}:wq; never the fencing counter {KEY}:fence
` + commonUsage + `
Exit status: 0 when something was removed on at least one master; 1 when
nothing was; 64 for bad usage or a bad node list; 69 when fewer than a
quorum of masters answer.

Example (a job died holding the lock; REDLOCK_TOKEN was in its log):
  redlock unlock nightly-export --token 5J3VQ2KXW7...
`

var (
	//go:embed unlock.lua
	unlockSrc string
	//go:embed force.lua
	forceSrc string
)

// unlockReport is what "unlock --json" prints.
type unlockReport struct {
	Key   string `json:"key"`
	Force bool   `json:"force"`
	// Masters lists each master's removals: with --token the kinds of
	// hold removed ("lock", "reentrant", "writer", "reader"), with
	// --force the Redis keys deleted.
	Masters []unlockResult `json:"masters"`
	// RemovedOn counts the masters where something was removed.
	RemovedOn int `json:"removed_on"`
	Quorum    int `json:"quorum"`
}

type unlockResult struct {
	Addr    string   `json:"addr"`
	Removed []string `json:"removed"`
	Error   string   `json:"error,omitempty"`
}

func cmdUnlock(args []string, e env) int {
	fs, c := newFlags("unlock", 2*time.Second)
	var token string
	var force bool
	fs.StringVar(&token, "token", "", "")
	fs.BoolVar(&force, "force", false, "")
	pos, tail, err := parseArgs(fs, args, 1)
	if code, ok := handleParse(e, "unlock", unlockUsage, err); !ok {
		return code
	}
	tokenSet := false
	fs.Visit(func(f *flag.Flag) { tokenSet = tokenSet || f.Name == "token" })
	switch {
	case len(pos) == 0 || pos[0] == "":
		return e.usageError("unlock", errors.New("no KEY"))
	case len(tail) > 0:
		return e.usageError("unlock", fmt.Errorf("unexpected argument %q", tail[0]))
	case force && tokenSet:
		return e.usageError("unlock", errors.New("--token and --force exclude each other"))
	case !force && token == "":
		return e.usageError("unlock", errors.New("give --token TOKEN (the holder's REDLOCK_TOKEN) or --force"))
	}
	ctx := context.Background()
	ms, code, ok := setup(ctx, "unlock", c, e)
	if !ok {
		return code
	}
	defer ms.Close()
	key := pos[0]
	k := keysOf(key)
	rep := unlockReport{Key: key, Force: force, Quorum: ms.quorum()}
	if force {
		rep.Masters = evalEverywhere(ctx, ms, time.Duration(c.nodeTimeout), forceSrc, []string{k.key, k.writer, k.readers, k.waiting}, []any{redlock.ReleaseChannel(key)})
	} else {
		rep.Masters = release(ctx, ms, time.Duration(c.nodeTimeout), key, token)
	}
	for _, m := range rep.Masters {
		if len(m.Removed) > 0 {
			rep.RemovedOn++
		}
	}
	if c.json {
		writeJSON(e.stdout, rep)
	} else {
		printUnlock(e, rep)
	}
	if rep.RemovedOn == 0 {
		return exitConflict
	}
	return exitOK
}

// release removes token's hold of key on every master and waits for
// every master's answer (the library's Unlock may return at a quorum).
func release(ctx context.Context, ms masters, timeout time.Duration, key, token string) []unlockResult {
	k := keysOf(key)
	return evalEverywhere(ctx, ms, timeout, unlockSrc, []string{k.key, k.writer, k.readers}, []any{token, redlock.ReleaseChannel(key)})
}

// evalEverywhere runs a script that answers a list of names on every
// master.
func evalEverywhere(ctx context.Context, ms masters, timeout time.Duration, src string, keys []string, argv []any) []unlockResult {
	hash := sha1hex(src)
	out := make([]unlockResult, len(ms))
	ms.each(ctx, timeout, func(ctx context.Context, i int, n *pool.Node) {
		res := unlockResult{Addr: n.Addr(), Removed: []string{}}
		reply, err := n.Eval(ctx, hash, src, keys, argv...)
		if err != nil {
			res.Error = err.Error()
		}
		list, _ := reply.([]any)
		for _, v := range list {
			res.Removed = append(res.Removed, string(asBytes(v)))
		}
		out[i] = res
	})
	return out
}

func sha1hex(s string) string {
	sum := sha1.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func printUnlock(e env, rep unlockReport) {
	for _, m := range rep.Masters {
		switch {
		case m.Error != "":
			fmt.Fprintf(e.stdout, "%s: ERROR: %s\n", m.Addr, m.Error)
		case len(m.Removed) == 0:
			fmt.Fprintf(e.stdout, "%s: nothing to remove\n", m.Addr)
		case rep.Force:
			fmt.Fprintf(e.stdout, "%s: deleted %s\n", m.Addr, strings.Join(m.Removed, ", "))
		default:
			fmt.Fprintf(e.stdout, "%s: released %s\n", m.Addr, strings.Join(m.Removed, ", "))
		}
	}
	fmt.Fprintf(e.stdout, "removed on %d of %d masters\n", rep.RemovedOn, len(rep.Masters))
}
