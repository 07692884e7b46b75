package main

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

const inspectUsage = `usage: redlock inspect [flags] KEY

Show, on every master, what holds KEY: a plain (or fenced) lock's token, a
reentrant lock's owners and hold counts, a read-write lock's writer, live
readers and waiting writer, each with its remaining TTL, and the fencing
counter; then which holders a quorum of the masters agrees on.

Flags:
` + commonUsage + `
Exit status: 0 (also when nothing holds KEY); 64 for bad usage or a bad node
list; 69 when fewer than a quorum of masters answer.

Example:
  redlock inspect --nodes redis-a:6379,redis-b:6379,redis-c:6379 nightly-export
`

// inspectReport is what "inspect --json" prints.
type inspectReport struct {
	Key     string       `json:"key"`
	Quorum  int          `json:"quorum"`
	Masters []keyState   `json:"masters"`
	Holders []holderView `json:"holders"` // every holder seen, with its masters
	// Held: some holder (not counting readers) is on a quorum of masters.
	Held bool `json:"held"`
}

// keyState is what one master keeps for the lock. TTLs are in milliseconds
// (-1: no expiry).
type keyState struct {
	Addr  string `json:"addr"`
	Error string `json:"error,omitempty"`
	// Type is the Redis type of KEY itself: "none", "string" (a plain or
	// fenced lock), "hash" (a reentrant lock) or another (not a lock).
	Type          string         `json:"type"`
	Lock          *hold          `json:"lock,omitempty"`
	Reentrant     *reentrantHold `json:"reentrant,omitempty"`
	Writer        *hold          `json:"writer,omitempty"`
	Readers       []hold         `json:"readers"`
	WaitingWriter *hold          `json:"waiting_writer,omitempty"` // Token is the writer's id
	Fence         *int64         `json:"fence"`                    // null: no counter
}

type hold struct {
	Token string `json:"token"`
	TTLMs int64  `json:"ttl_ms"`
}

type reentrantHold struct {
	Owners map[string]int64 `json:"owners"` // owner -> hold count
	TTLMs  int64            `json:"ttl_ms"`
}

// holderView is one holder across the masters. Kind is "lock",
// "reentrant" (Token is the owner), "writer" or "reader".
type holderView struct {
	Kind    string   `json:"kind"`
	Token   string   `json:"token"`
	Masters []string `json:"masters"`
	Quorum  bool     `json:"quorum"`
}

func cmdInspect(args []string, e env) int {
	fs, c := newFlags("inspect", 2*time.Second)
	pos, tail, err := parseArgs(fs, args, 1)
	if code, ok := handleParse(e, "inspect", inspectUsage, err); !ok {
		return code
	}
	switch {
	case len(pos) == 0 || pos[0] == "":
		return e.usageError("inspect", fmt.Errorf("no KEY"))
	case len(tail) > 0:
		return e.usageError("inspect", fmt.Errorf("unexpected argument %q", tail[0]))
	}
	ctx := context.Background()
	ms, code, ok := setup(ctx, "inspect", c, e)
	if !ok {
		return code
	}
	defer ms.Close()
	key := pos[0]
	rep := inspectReport{Key: key, Quorum: ms.quorum(), Masters: make([]keyState, len(ms))}
	ms.each(ctx, time.Duration(c.nodeTimeout), func(ctx context.Context, i int, n *pool.Node) {
		rep.Masters[i] = readState(ctx, n, keysOf(key))
	})
	rep.Holders = holders(rep.Masters, rep.Quorum)
	for _, h := range rep.Holders {
		rep.Held = rep.Held || (h.Quorum && h.Kind != "reader")
	}
	if c.json {
		writeJSON(e.stdout, rep)
	} else {
		printInspect(e, rep)
	}
	return exitOK
}

// readState reads one master's state of the lock named k.key.
func readState(ctx context.Context, n *pool.Node, k lockKeys) keyState {
	s := keyState{Addr: n.Addr(), Readers: []hold{}}
	r := seq{ctx: ctx, n: n}
	s.Type = r.str("TYPE", k.key)
	switch s.Type {
	case "string":
		s.Lock = &hold{Token: r.str("GET", k.key), TTLMs: r.int("PTTL", k.key)}
	case "hash":
		s.Reentrant = &reentrantHold{Owners: reentrantOwners(r.do("HGETALL", k.key)), TTLMs: r.int("PTTL", k.key)}
	}
	if v := r.do("GET", k.writer); v != nil {
		s.Writer = &hold{Token: string(asBytes(v)), TTLMs: r.int("PTTL", k.writer)}
	}
	if v := r.do("GET", k.waiting); v != nil {
		s.WaitingWriter = &hold{Token: string(asBytes(v)), TTLMs: r.int("PTTL", k.waiting)}
	}
	if members, _ := r.do("ZRANGE", k.readers, 0, -1, "WITHSCORES").([]any); len(members) > 0 {
		if now, err := serverMillis(r.do("TIME")); err == nil {
			for i := 0; i+1 < len(members); i += 2 {
				expiry, _ := strconv.ParseInt(string(asBytes(members[i+1])), 10, 64)
				if expiry > now { // an expired reader holds nothing
					s.Readers = append(s.Readers, hold{Token: string(asBytes(members[i])), TTLMs: expiry - now})
				}
			}
		}
	}
	if v := r.do("GET", k.fence); v != nil {
		f, err := strconv.ParseInt(string(asBytes(v)), 10, 64)
		if err == nil {
			s.Fence = &f
		}
	}
	if r.err != nil {
		return keyState{Addr: n.Addr(), Error: r.err.Error(), Readers: []hold{}}
	}
	return s
}

// seq sends commands to one master until the first error, which it
// keeps.
type seq struct {
	ctx context.Context
	n   *pool.Node
	err error
}

func (r *seq) do(cmd string, args ...any) any {
	if r.err != nil {
		return nil
	}
	v, err := r.n.Do(r.ctx, cmd, args...)
	if err != nil {
		r.err = fmt.Errorf("%s: %w", cmd, err)
	}
	return v
}

func (r *seq) str(cmd string, args ...any) string { return string(asBytes(r.do(cmd, args...))) }

func (r *seq) int(cmd string, args ...any) int64 {
	v, _ := r.do(cmd, args...).(int64)
	return v
}

// serverMillis reads a TIME reply as Unix milliseconds, as the read lock's
// scripts do.
func serverMillis(reply any) (int64, error) {
	parts, ok := reply.([]any)
	if !ok || len(parts) != 2 {
		return 0, fmt.Errorf("unexpected TIME reply")
	}
	sec, err1 := strconv.ParseInt(string(asBytes(parts[0])), 10, 64)
	usec, err2 := strconv.ParseInt(string(asBytes(parts[1])), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("unexpected TIME reply")
	}
	return sec*1000 + usec/1000, nil
}

// holders groups the holders seen on the masters, in a stable order.
func holders(states []keyState, quorum int) []holderView {
	type id struct{ kind, token string }
	seen := map[id][]string{}
	add := func(kind, token, addr string) { seen[id{kind, token}] = append(seen[id{kind, token}], addr) }
	for _, s := range states {
		if s.Lock != nil {
			add("lock", s.Lock.Token, s.Addr)
		}
		if s.Reentrant != nil {
			for owner := range s.Reentrant.Owners {
				add("reentrant", owner, s.Addr)
			}
		}
		if s.Writer != nil {
			add("writer", s.Writer.Token, s.Addr)
		}
		for _, r := range s.Readers {
			add("reader", r.Token, s.Addr)
		}
	}
	out := []holderView{}
	for _, k := range slices.SortedFunc(maps.Keys(seen), func(a, b id) int {
		if c := len(seen[b]) - len(seen[a]); c != 0 {
			return c
		}
		if a.kind != b.kind {
			return cmp.Compare(a.kind, b.kind)
		}
		return cmp.Compare(a.token, b.token)
	}) {
		out = append(out, holderView{Kind: k.kind, Token: k.token, Masters: seen[k], Quorum: len(seen[k]) >= quorum})
	}
	return out
}

func printInspect(e env, rep inspectReport) {
	w := e.stdout
	for _, s := range rep.Masters {
		if s.Error != "" {
			fmt.Fprintf(w, "%s: ERROR: %s\n", s.Addr, s.Error)
			continue
		}
		fmt.Fprintf(w, "%s:\n", s.Addr)
		empty := true
		if s.Lock != nil {
			fmt.Fprintf(w, "  lock: token %s, ttl %s\n", s.Lock.Token, ttlString(s.Lock.TTLMs))
			empty = false
		}
		if s.Reentrant != nil {
			for _, o := range slices.Sorted(maps.Keys(s.Reentrant.Owners)) {
				fmt.Fprintf(w, "  reentrant: owner %s, %d hold(s), ttl %s\n", o, s.Reentrant.Owners[o], ttlString(s.Reentrant.TTLMs))
			}
			empty = false
		}
		if s.Type != "none" && s.Type != "string" && s.Type != "hash" {
			fmt.Fprintf(w, "  %s is a %s, not a lock\n", rep.Key, s.Type)
			empty = false
		}
		if s.Writer != nil {
			fmt.Fprintf(w, "  writer: token %s, ttl %s\n", s.Writer.Token, ttlString(s.Writer.TTLMs))
			empty = false
		}
		for _, r := range s.Readers {
			fmt.Fprintf(w, "  reader: token %s, ttl %s\n", r.Token, ttlString(r.TTLMs))
			empty = false
		}
		if s.WaitingWriter != nil {
			fmt.Fprintf(w, "  waiting writer: id %s, ttl %s\n", s.WaitingWriter.Token, ttlString(s.WaitingWriter.TTLMs))
			empty = false
		}
		if empty {
			fmt.Fprintf(w, "  not held\n")
		}
		if s.Fence != nil {
			fmt.Fprintf(w, "  fencing counter: %d\n", *s.Fence)
		}
	}
	if len(rep.Holders) == 0 {
		fmt.Fprintf(w, "%s is not held on any master\n", rep.Key)
	}
	for _, h := range rep.Holders {
		agree := "no quorum"
		if h.Quorum {
			agree = "quorum"
		}
		fmt.Fprintf(w, "%s %s on %d of %d masters (%s)\n", h.Kind, h.Token, len(h.Masters), len(rep.Masters), agree)
	}
}

func ttlString(ms int64) string {
	if ms < 0 {
		return "none"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}

// reentrantOwners reads a reentrant lock's hash (HGETALL's reply): its
// owner and how many holds it has (see layout: the field "owner", and one
// field "h:<hold id>" per hold).
func reentrantOwners(reply any) map[string]int64 {
	kv, _ := reply.([]any)
	owner, holds := "", int64(0)
	for i := 0; i+1 < len(kv); i += 2 {
		switch f := string(asBytes(kv[i])); {
		case f == layout.OwnerField:
			owner = string(asBytes(kv[i+1]))
		case strings.HasPrefix(f, layout.HoldPrefix):
			holds++
		}
	}
	owners := map[string]int64{}
	if owner != "" {
		owners[owner] = holds
	}
	return owners
}
