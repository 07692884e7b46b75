package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

const unlockUsage = `usage: redlock unlock [flags] KEY (--token TOKEN | --force)

Release KEY on every master. Only what this library writes is touched: a
key that holds anything else (no TTL, another shape, a value that is not
one of the library's 26-character base32 tokens: an application's cached
UUID, JWT or URL under the same name) is left alone and named, and unlock
exits 65. The restart guard's record ({quorumlock}:guard) and fencing
counters are never deleted.

  --token TOKEN  remove only TOKEN's hold (compare-and-delete): a plain,
                 fenced, fair or multi-key lock's KEY with that token, a
                 reentrant lock's owner TOKEN (all its holds), a read-write
                 lock's writer or reader, a semaphore permit
  --force        remove KEY's lock state whoever holds it: KEY, {KEY}:w,
                 {KEY}:r, {KEY}:wq and the semaphore permits {KEY}:permit:*;
                 never the fencing counter {KEY}:fence (tokens keep
                 growing) nor a fair lock's queue {KEY}:fair:* (waiters'
                 registrations expire on their own)
  --permits K    a semaphore's number of permits: look at permits 0 to K-1
                 (default: SCAN each master for KEY's permits)
` + prefixUsage + commonUsage + `
Exit status: 0 when something was removed on at least one master; 1 when
nothing was; 65 when a key was left alone because it is not a lock (whatever
else was removed); 64 for bad usage or a bad node list; 69 when fewer than
a quorum of masters answer.

Example (a job died holding the lock; REDLOCK_TOKEN was in its log):
  redlock unlock nightly-export --token 5J3VQ2KXW7...
`

// unlockReport is what "unlock --json" prints.
type unlockReport struct {
	Key    string `json:"key"`
	Prefix string `json:"prefix,omitempty"`
	Force  bool   `json:"force"`
	// Masters lists each master's removals: with --token the kinds of
	// hold removed ("lock", "reentrant", "writer", "reader", "permit"),
	// with --force the Redis keys deleted.
	Masters []unlockResult `json:"masters"`
	// RemovedOn counts the masters where something was removed.
	RemovedOn int `json:"removed_on"`
	Quorum    int `json:"quorum"`
	// Refused: some key was left alone because it is not a lock (see the
	// masters' refused).
	Refused bool `json:"refused"`
}

type unlockResult struct {
	Addr    string   `json:"addr"`
	Removed []string `json:"removed"`
	// Refused are the keys left alone, with what they are instead of lock
	// state.
	Refused []notLock `json:"refused"`
	// PermitsNotScanned says why no semaphore permits were looked for.
	PermitsNotScanned string `json:"permits_not_scanned,omitempty"`
	Error             string `json:"error,omitempty"`
}

func cmdUnlock(args []string, e env) int {
	fs, c := newFlags("unlock", 2*time.Second)
	kf := addKeyFlags(fs)
	var token string
	var force bool
	fs.StringVar(&token, "token", "", "")
	fs.BoolVar(&force, "force", false, "")
	permits := fs.Int("permits", 0, "")
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
	case *permits < 0 || *permits > redlock.MaxPermits:
		return e.usageError("unlock", fmt.Errorf("--permits %d outside 0..%d", *permits, redlock.MaxPermits))
	}
	ctx := context.Background()
	ms, code, ok := setup(ctx, "unlock", c, e)
	if !ok {
		return code
	}
	defer ms.Close()
	prefix := kf.resolve(fs, e)
	k := keysOf(prefix, pos[0])
	rep := unlockReport{Key: k.key, Prefix: prefix, Force: force, Quorum: ms.quorum()}
	if force {
		rep.Masters = forceEverywhere(ctx, ms, time.Duration(c.nodeTimeout), k, *permits)
	} else {
		rep.Masters = release(ctx, ms, time.Duration(c.nodeTimeout), k, token, *permits)
	}
	for _, m := range rep.Masters {
		if len(m.Removed) > 0 {
			rep.RemovedOn++
		}
		rep.Refused = rep.Refused || len(m.Refused) > 0
	}
	if c.json {
		writeJSON(e.stdout, rep)
	} else {
		printUnlock(e, rep)
	}
	switch {
	case rep.Refused:
		return exitNotLock
	case rep.RemovedOn == 0:
		return exitConflict
	}
	return exitOK
}

// release removes token's hold of the lock k on every master and waits
// for every master's answer (the library's Unlock may return at a
// quorum). K is --permits (0: SCAN for permits).
func release(ctx context.Context, ms masters, timeout time.Duration, k lockKeys, token string, K int) []unlockResult {
	return evalEverywhere(ctx, ms, timeout, k, K, forToken, unlockSrc, token, k.channel())
}

// forceEverywhere deletes the lock state of k on every master.
func forceEverywhere(ctx context.Context, ms masters, timeout time.Duration, k lockKeys, K int) []unlockResult {
	return evalEverywhere(ctx, ms, timeout, k, K, forForce, forceSrc, k.channel())
}

// evalEverywhere runs src, a script that answers {removed, refused}, on
// every master with k's keys for use and their roles after args.
func evalEverywhere(ctx context.Context, ms masters, timeout time.Duration, k lockKeys, K, use int, src string, args ...any) []unlockResult {
	out := make([]unlockResult, len(ms))
	ms.each(ctx, scanBudget, func(ctx context.Context, i int, n *pool.Node) {
		res := unlockResult{Addr: n.Addr(), Removed: []string{}, Refused: []notLock{}}
		defer func() { out[i] = res }()
		permits, note, err := permitList(ctx, n, k, K, timeout)
		if err != nil {
			res.Error = err.Error()
			return
		}
		res.PermitsNotScanned = note
		keys := k.selectFor(use, permits)
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		reply, err := eval(cctx, n, src, keys.names, append(args, keys.args()...)...)
		if err != nil {
			res.Error = err.Error()
			return
		}
		parts, _ := reply.([]any)
		if len(parts) != 2 {
			res.Error = fmt.Sprintf("unexpected reply %v", reply)
			return
		}
		removed, _ := parts[0].([]any)
		for _, v := range removed {
			res.Removed = append(res.Removed, string(asBytes(v)))
		}
		refused, _ := parts[1].([]any)
		for j := 0; j+1 < len(refused); j += 2 {
			res.Refused = append(res.Refused, notLock{Key: string(asBytes(refused[j])), Reason: string(asBytes(refused[j+1]))})
		}
	})
	return out
}

func printUnlock(e env, rep unlockReport) {
	for _, m := range rep.Masters {
		switch {
		case m.Error != "":
			fmt.Fprintf(e.stdout, "%s: ERROR: %s\n", m.Addr, m.Error)
		case len(m.Removed) == 0 && len(m.Refused) == 0:
			fmt.Fprintf(e.stdout, "%s: nothing to remove\n", m.Addr)
		case len(m.Removed) == 0:
		case rep.Force:
			fmt.Fprintf(e.stdout, "%s: deleted %s\n", m.Addr, strings.Join(m.Removed, ", "))
		default:
			fmt.Fprintf(e.stdout, "%s: released %s\n", m.Addr, strings.Join(m.Removed, ", "))
		}
		for _, r := range m.Refused {
			fmt.Fprintf(e.stdout, "%s: LEFT ALONE %s: not a lock: %s\n", m.Addr, r.Key, r.Reason)
		}
		if m.PermitsNotScanned != "" {
			fmt.Fprintf(e.stdout, "%s: %s\n", m.Addr, m.PermitsNotScanned)
		}
	}
	fmt.Fprintf(e.stdout, "removed on %d of %d masters\n", rep.RemovedOn, len(rep.Masters))
	if rep.Refused {
		fmt.Fprintf(e.stdout, "some keys were left alone: they hold something no lock writes (an application's data?); look with redlock inspect or redis-cli\n")
	}
}
