package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// keyState is what one master keeps for a lock: what state.lua read there
// in one atomic step. TTLs are in milliseconds (-1: no expiry).
type keyState struct {
	Addr  string `json:"addr"`
	Error string `json:"error,omitempty"`
	// Type is the Redis type of KEY itself: "none", "string" (a plain,
	// fenced, fair or multi-key lock), "hash" (a reentrant lock) or
	// another (not a lock).
	Type          string         `json:"type"`
	Lock          *hold          `json:"lock,omitempty"`
	Reentrant     *reentrantHold `json:"reentrant,omitempty"`
	Writer        *hold          `json:"writer,omitempty"`
	Readers       []hold         `json:"readers"`
	WaitingWriter *hold          `json:"waiting_writer,omitempty"` // Token is the writer's id
	Fence         *int64         `json:"fence"`                    // null: no counter
	// Permits are the semaphore permits held here, by permit.
	Permits []permitHold `json:"permits"`
	// FairQueue are a fair lock's live waiters here, in the order the
	// master serves them (ticket, then id).
	FairQueue []waiter `json:"fair_queue"`
	// PermitsNotScanned says why no permits were looked for (a master
	// too large to SCAN without --permits).
	PermitsNotScanned string `json:"permits_not_scanned,omitempty"`
	// Holder is the lock's holder record (redlock.WithMetadata): who holds
	// it (the lock, a reentrant lock's owner, or the writer).
	Holder *holderRecord `json:"holder,omitempty"`
	// StalePermitRecords are the permits' holder records that do not
	// name their permit's token, ignored.
	StalePermitRecords []*holderRecord `json:"stale_permit_records,omitempty"`
	// NotLock are the keys under the lock's names that hold something no
	// lock writes (an application's data: no TTL, another shape); none of
	// it counts as a holder, and unlock leaves it alone.
	NotLock []notLock `json:"not_lock"`
	// RunID is the master's running process (INFO's run_id, as this
	// command's connection read it), "" when unknown.
	RunID string `json:"run_id,omitempty"`
	// Guard is the master's restart-guard record (null: none), and
	// GuardError why it could not be read.
	Guard      *guardRecord `json:"guard"`
	GuardError string       `json:"guard_error,omitempty"`
}

type hold struct {
	Token string `json:"token"`
	TTLMs int64  `json:"ttl_ms"`
}

type reentrantHold struct {
	Owners map[string]int64 `json:"owners"` // owner -> hold count
	TTLMs  int64            `json:"ttl_ms"`
}

type permitHold struct {
	Permit int    `json:"permit"`
	Token  string `json:"token"`
	TTLMs  int64  `json:"ttl_ms"`
	// Record is the permit's holder record (Acquire WithMetadata), when
	// it has one with its token.
	Record *holderRecord `json:"record,omitempty"`
}

// waiter is a fair lock's registered waiter; TTLMs is what is left of its
// registration (it expires unless the waiter refreshes it).
type waiter struct {
	ID     string `json:"id"`
	Ticket int64  `json:"ticket"`
	TTLMs  int64  `json:"ttl_ms"`
}

type notLock struct {
	Key    string `json:"key"`    // its name on the master
	Reason string `json:"reason"` // what it is instead
}

// readState reads one master's state of the lock k, with the permits that
// K (--permits) names or a SCAN finds; each call to the master has timeout.
func readState(ctx context.Context, n *pool.Node, k lockKeys, K int, timeout time.Duration) keyState {
	fail := func(err error) keyState {
		return keyState{Addr: n.Addr(), Error: err.Error(), Readers: []hold{}, Permits: []permitHold{}, FairQueue: []waiter{}, NotLock: []notLock{}}
	}
	permits, note, err := permitList(ctx, n, k, K, timeout)
	if err != nil {
		return fail(err)
	}
	keys := k.selectFor(forInspect, permits)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	reply, err := eval(cctx, n, stateSrc, keys.names, keys.args()...)
	if err != nil {
		return fail(fmt.Errorf("reading the lock's keys: %w", err))
	}
	s, err := parseState(reply, keys, permits)
	if err != nil {
		return fail(err)
	}
	s.Addr, s.PermitsNotScanned = n.Addr(), note
	gctx, gcancel := context.WithTimeout(ctx, timeout)
	defer gcancel()
	if s.Guard, err = readGuard(gctx, n, k.prefix); err != nil {
		s.GuardError = err.Error()
	}
	s.RunID = runID(n)
	return s
}

// entry is one key's part of state.lua's reply.
type entry struct {
	typ, why string
	pttl     int64
	content  []string
}

// parseState reads state.lua's reply for keys (whose permits are permits).
func parseState(reply any, keys roleKeys, permits []int) (keyState, error) {
	s := keyState{Type: "none", Readers: []hold{}, Permits: []permitHold{}, FairQueue: []waiter{}, NotLock: []notLock{}}
	list, _ := reply.([]any)
	if len(list) != 1+len(keys.names) {
		return s, fmt.Errorf("unexpected reply from the state script")
	}
	now, _ := list[0].(int64)
	var queue []string
	tickets, expiries := map[string]int64{}, map[string]int64{}
	nextPermit := 0
	permitHeld := false // the permit last read is held here
	for i, raw := range list[1:] {
		e, err := parseEntry(raw)
		if err != nil {
			return s, err
		}
		role := keys.roles[i]
		if role == roleKey {
			s.Type = e.typ
		}
		if role == rolePermit {
			nextPermit++
			permitHeld = false
		}
		switch {
		case e.why != "":
			s.NotLock = append(s.NotLock, notLock{Key: keys.names[i], Reason: e.why})
			continue
		case e.typ == "none":
			continue
		}
		switch role {
		case roleKey:
			if e.typ == "hash" {
				s.Reentrant = &reentrantHold{Owners: reentrantOwners(e.content), TTLMs: e.pttl}
			} else {
				s.Lock = &hold{Token: e.content[0], TTLMs: e.pttl}
			}
		case roleWriter:
			s.Writer = &hold{Token: e.content[0], TTLMs: e.pttl}
		case roleWaiting:
			s.WaitingWriter = &hold{Token: e.content[0], TTLMs: e.pttl}
		case roleReaders:
			for m, score := range pairs(e.content) {
				if score > now { // an expired reader holds nothing
					s.Readers = append(s.Readers, hold{Token: m, TTLMs: score - now})
				}
			}
		case roleQueue:
			for m, score := range pairs(e.content) {
				queue = append(queue, m)
				tickets[m] = score
			}
		case roleExpiry:
			for m, score := range pairs(e.content) {
				expiries[m] = score
			}
		case roleFence:
			if f, err := strconv.ParseInt(e.content[0], 10, 64); err == nil {
				s.Fence = &f
			}
		case rolePermit:
			s.Permits = append(s.Permits, permitHold{Permit: permits[nextPermit-1], Token: e.content[0], TTLMs: e.pttl})
			permitHeld = true
		case rolePermitHolder:
			r := readHolder(e.content, e.pttl)
			if permitHeld && s.Permits[len(s.Permits)-1].Token == r.Token {
				r.Matches, s.Permits[len(s.Permits)-1].Record = true, r
			} else {
				s.StalePermitRecords = append(s.StalePermitRecords, r)
			}
		case roleHolder:
			s.Holder = readHolder(e.content, e.pttl)
		}
	}
	for _, id := range queue { // ZRANGE's order: ticket, then id
		if exp, ok := expiries[id]; ok && exp > now { // else gone
			s.FairQueue = append(s.FairQueue, waiter{ID: id, Ticket: tickets[id], TTLMs: exp - now})
		}
	}
	if s.Holder != nil {
		t := s.Holder.Token
		s.Holder.Matches = s.Lock != nil && s.Lock.Token == t || s.Writer != nil && s.Writer.Token == t ||
			s.Reentrant != nil && s.Reentrant.Owners[t] > 0
	}
	return s, nil
}

func parseEntry(raw any) (entry, error) {
	parts, _ := raw.([]any)
	if len(parts) != 4 {
		return entry{}, fmt.Errorf("unexpected entry in the state script's reply")
	}
	e := entry{typ: string(asBytes(parts[0])), why: string(asBytes(parts[2]))}
	e.pttl, _ = parts[1].(int64)
	content, _ := parts[3].([]any)
	for _, v := range content {
		e.content = append(e.content, string(asBytes(v)))
	}
	if e.why == "" && e.typ == "string" && len(e.content) != 1 {
		return entry{}, fmt.Errorf("unexpected string entry in the state script's reply")
	}
	return e, nil
}

// pairs yields a sorted set's members with their integer scores, from
// ZRANGE WITHSCORES's list.
func pairs(flat []string) func(yield func(string, int64) bool) {
	return func(yield func(string, int64) bool) {
		for i := 0; i+1 < len(flat); i += 2 {
			score, _ := strconv.ParseInt(flat[i+1], 10, 64)
			if !yield(flat[i], score) {
				return
			}
		}
	}
}

// reentrantOwners reads a reentrant lock's hash (HGETALL's list): its
// owner and how many holds it has (see layout: the field "owner", and one
// field "h:<hold id>" per hold).
func reentrantOwners(kv []string) map[string]int64 {
	owner, holds := "", int64(0)
	for i := 0; i+1 < len(kv); i += 2 {
		switch f := kv[i]; {
		case f == layout.OwnerField:
			owner = kv[i+1]
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
