package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

const inspectUsage = `usage: redlock inspect [flags] KEY [KEY...]

Show, on every master, what holds KEY: a plain, fenced, fair or multi-key
lock's token, a reentrant lock's owner and hold count, a read-write lock's
writer, live readers and waiting writer, a semaphore's held permits, a fair
lock's waiters in order, each with its remaining TTL, the fencing counter,
and who holds the lock: its holder record (redlock.WithMetadata), every
field of it (for "redlock run": host, pid, since when, its note; for an
election: value and term); then which holders a quorum of the masters
agrees on. Keys that hold something no lock writes (no TTL, another shape: an
application's data under the same name) are named as not a lock, and
counted as no holder. Several KEYs: one report each, and a token that holds
several of them (a multi-key lock) is said to. Each master's restart-guard
record is shown too: the run registered for it (and whether it is the
running process: if not, the master restarted since), the persistence
recorded and the longest TTL recorded.

Flags:
  --permits K             a semaphore's number of permits: look at permits 0
                          to K-1 (default: SCAN each master for KEY's permits)
` + prefixUsage + commonUsage + `
Exit status: 0 (also when nothing holds KEY, or KEY is not a lock); 64 for
bad usage or a bad node list; 69 when fewer than a quorum of masters answer.

Example:
  redlock inspect --nodes redis-a:6379,redis-b:6379,redis-c:6379 nightly-export
`

// inspectReport is what "inspect --json" prints for one KEY (an array of
// them for several).
type inspectReport struct {
	Key     string       `json:"key"`
	Prefix  string       `json:"prefix,omitempty"`
	Quorum  int          `json:"quorum"`
	Masters []keyState   `json:"masters"`
	Holders []holderView `json:"holders"` // every holder seen, with its masters
	// Held: some holder (not counting readers) is on a quorum of masters.
	Held bool `json:"held"`
	// NotLock: on some master, KEY or a key derived from it holds
	// something no lock writes (see the masters' not_lock).
	NotLock bool `json:"not_lock"`
	// Waiters is a fair lock's queue across the masters, in order.
	Waiters []waiterView `json:"waiters"`
}

// holderView is one holder across the masters. Kind is "lock",
// "reentrant" (Token is the owner), "writer", "reader" or "permit".
type holderView struct {
	Kind    string   `json:"kind"`
	Token   string   `json:"token"`
	Permit  *int     `json:"permit,omitempty"` // kind "permit": which one
	Masters []string `json:"masters"`
	Quorum  bool     `json:"quorum"`
	// Record is the holder record with this holder's token (redlock run's,
	// an election's, any lock's taken WithMetadata: a lock's, a reentrant
	// owner's, a writer's, a permit's), from the first of its masters that
	// has one.
	Record *holderRecord `json:"record,omitempty"`
	// Keys are the KEYs inspected together that this token holds as a lock
	// (a multi-key lock), when more than one.
	Keys []string `json:"keys,omitempty"`
}

// waiterView is one fair waiter across the masters; Ticket is its highest
// ticket there and TTLMs its longest remaining registration.
type waiterView struct {
	ID      string   `json:"id"`
	Ticket  int64    `json:"ticket"`
	TTLMs   int64    `json:"ttl_ms"`
	Masters []string `json:"masters"`
	Quorum  bool     `json:"quorum"`
}

func cmdInspect(args []string, e env) int {
	fs, c := newFlags("inspect", 2*time.Second)
	kf := addKeyFlags(fs)
	permits := fs.Int("permits", 0, "")
	pos, tail, err := parseArgs(fs, args, maxKeys)
	if code, ok := handleParse(e, "inspect", inspectUsage, err); !ok {
		return code
	}
	switch {
	case len(pos) == 0:
		return e.usageError("inspect", fmt.Errorf("no KEY"))
	case slices.Contains(pos, ""):
		return e.usageError("inspect", fmt.Errorf("empty KEY"))
	case len(tail) > 0:
		return e.usageError("inspect", fmt.Errorf("more than %d KEYs", maxKeys))
	case *permits < 0 || *permits > redlock.MaxPermits:
		return e.usageError("inspect", fmt.Errorf("--permits %d outside 0..%d", *permits, redlock.MaxPermits))
	}
	ctx := context.Background()
	ms, code, ok := setup(ctx, "inspect", c, e)
	if !ok {
		return code
	}
	defer ms.Close()
	prefix := kf.resolve(fs, e)
	reps := make([]inspectReport, len(pos))
	for i, key := range pos {
		reps[i] = inspectKey(ctx, ms, keysOf(prefix, key), *permits, time.Duration(c.nodeTimeout))
		reps[i].Prefix = prefix
	}
	markMulti(reps)
	switch {
	case c.json && len(reps) == 1:
		writeJSON(e.stdout, reps[0])
	case c.json:
		writeJSON(e.stdout, reps)
	default:
		for i, rep := range reps {
			if len(reps) > 1 {
				if i > 0 {
					fmt.Fprintln(e.stdout)
				}
				fmt.Fprintf(e.stdout, "== %s\n", rep.Key)
			}
			printInspect(e, rep)
		}
		printMulti(e, reps)
	}
	return exitOK
}

// maxKeys is the most KEYs one inspect takes.
const maxKeys = 64

// scanBudget bounds the time that inspect and unlock spend on one master
// (each call to it has the node timeout): a SCAN for permits makes one
// call per 1000 keys of its keyspace.
const scanBudget = time.Minute

// inspectKey reads the lock k on every master and sums it up.
func inspectKey(ctx context.Context, ms masters, k lockKeys, permits int, timeout time.Duration) inspectReport {
	rep := inspectReport{Key: k.key, Quorum: ms.quorum(), Masters: make([]keyState, len(ms))}
	ms.each(ctx, scanBudget, func(ctx context.Context, i int, n *pool.Node) {
		rep.Masters[i] = readState(ctx, n, k, permits, timeout)
	})
	rep.Holders = holders(rep.Masters, rep.Quorum)
	rep.Waiters = waiters(rep.Masters, rep.Quorum)
	for _, h := range rep.Holders {
		rep.Held = rep.Held || (h.Quorum && h.Kind != "reader")
	}
	for _, s := range rep.Masters {
		rep.NotLock = rep.NotLock || len(s.NotLock) > 0
	}
	return rep
}

// holders groups the holders seen on the masters, in a stable order.
func holders(states []keyState, quorum int) []holderView {
	type id struct {
		kind, token string
		permit      int
	}
	seen := map[id][]string{}
	records := map[id]*holderRecord{}
	add := func(kind, token string, permit int, addr string) {
		k := id{kind, token, permit}
		seen[k] = append(seen[k], addr)
	}
	record := func(kind, token string, permit int, r *holderRecord) {
		if k := (id{kind, token, permit}); r != nil && r.Matches && records[k] == nil {
			records[k] = r
		}
	}
	for _, s := range states {
		if s.Lock != nil {
			add("lock", s.Lock.Token, -1, s.Addr)
			record("lock", s.Lock.Token, -1, s.Holder)
		}
		if s.Reentrant != nil {
			for owner := range s.Reentrant.Owners {
				add("reentrant", owner, -1, s.Addr)
				record("reentrant", owner, -1, s.Holder)
			}
		}
		if s.Writer != nil {
			add("writer", s.Writer.Token, -1, s.Addr)
			record("writer", s.Writer.Token, -1, s.Holder)
		}
		for _, r := range s.Readers {
			add("reader", r.Token, -1, s.Addr)
		}
		for _, p := range s.Permits {
			add("permit", p.Token, p.Permit, s.Addr)
			record("permit", p.Token, p.Permit, p.Record)
		}
	}
	out := []holderView{}
	for _, k := range slices.SortedFunc(maps.Keys(seen), func(a, b id) int {
		if c := len(seen[b]) - len(seen[a]); c != 0 {
			return c
		}
		return cmp.Or(cmp.Compare(a.kind, b.kind), cmp.Compare(a.permit, b.permit), cmp.Compare(a.token, b.token))
	}) {
		h := holderView{Kind: k.kind, Token: k.token, Masters: seen[k], Quorum: len(seen[k]) >= quorum}
		if k.kind == "permit" {
			h.Permit = &k.permit
		}
		h.Record = records[k]
		out = append(out, h)
	}
	return out
}

// waiters merges the masters' fair queues, in order of ticket, then id.
func waiters(states []keyState, quorum int) []waiterView {
	byID := map[string]*waiterView{}
	for _, s := range states {
		for _, w := range s.FairQueue {
			v := byID[w.ID]
			if v == nil {
				v = &waiterView{ID: w.ID}
				byID[w.ID] = v
			}
			v.Ticket, v.TTLMs = max(v.Ticket, w.Ticket), max(v.TTLMs, w.TTLMs)
			v.Masters = append(v.Masters, s.Addr)
			v.Quorum = len(v.Masters) >= quorum
		}
	}
	out := []waiterView{}
	for _, v := range byID {
		out = append(out, *v)
	}
	slices.SortFunc(out, func(a, b waiterView) int {
		return cmp.Or(cmp.Compare(a.Ticket, b.Ticket), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// markMulti notes, on every lock holder with a quorum, the other KEYs that
// its token holds with a quorum too: the keys of one multi-key lock.
func markMulti(reps []inspectReport) {
	keys := map[string][]string{} // token -> keys
	for _, rep := range reps {
		for _, h := range rep.Holders {
			if h.Kind == "lock" && h.Quorum {
				keys[h.Token] = append(keys[h.Token], rep.Key)
			}
		}
	}
	for i := range reps {
		for j, h := range reps[i].Holders {
			if h.Kind == "lock" && h.Quorum && len(keys[h.Token]) > 1 {
				reps[i].Holders[j].Keys = keys[h.Token]
			}
		}
	}
}
