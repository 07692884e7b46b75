package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// Holder is who holds a lock, as a quorum of the masters says
// (Locker.Holder).
type Holder struct {
	// Token is the holder's token (Lock.Token; a reentrant lock's
	// owner).
	Token string
	// Metadata is the holder record's fields (WithMetadata,
	// Lock.SetMetadata), as the most of the masters that hold the lock
	// keep them; nil when the lock was taken without a record.
	Metadata map[string]string
	// TTL is how long from now a quorum of the masters is sure to keep
	// the lock: the shortest remaining TTL among the quorum, less the
	// clock drift for it and the time the read took (as Lock.Check).
	TTL time.Duration
	// Masters is the number of masters that hold the lock with Token.
	Masters int
}

// Holder reads, changing nothing, who holds the lock named key: the token
// that a quorum of the masters hold it with, and its holder record. It
// reads every master (until each answered or the node timeout passed).
// When no token holds a quorum (the lock is free, expiring, or being
// taken), the error matches ErrNotHeld; when too few masters answered to
// tell, it is a *QuorumError (Op "holder") that matches ErrUnavailable.
// It reads the lock of every exclusive kind named key: a plain or fenced
// lock of Lock, TryLock and Do, a Fair lock, a Reentrant lock (its owner),
// an RWMutex's writer, and a LockMulti whose first key is key (the record
// is the first key's). Read holds and a Semaphore's permits are shared:
// their key reads as not held (inspect shows each permit's holder).
// A bad key gives an error matching ErrInvalid, and nothing is sent.
func (l *Locker) Holder(ctx context.Context, key string) (*Holder, error) {
	token, hv, ttl, err := l.readHolder(ctx, key)
	if err != nil {
		return nil, err
	}
	return &Holder{Token: token, Metadata: hv.record(), TTL: ttl, Masters: hv.n}, nil
}

// readHolder is Holder's read: the token that a quorum holds key with,
// their records, and how long the quorum is sure to keep it.
func (l *Locker) readHolder(ctx context.Context, key string) (string, *holderVotes, time.Duration, error) {
	if err := l.checkMade(); err != nil {
		return "", nil, 0, err
	}
	if ctx == nil {
		return "", nil, 0, invalid("nil context")
	}
	if err := l.checkKey(key); err != nil {
		return "", nil, 0, err
	}
	rkey := l.prefix + key
	if err := checkDerivable(rkey); err != nil {
		return "", nil, 0, err
	}
	if err := ctx.Err(); err != nil {
		return "", nil, 0, l.quorumError(opHolder, key, nil, err)
	}
	c := l.newHolderRead(rkey)
	start := l.clock.Now()
	res := l.gatherAll(ctx, c, nil)
	answered := 0
	seen := map[string]*holderVotes{}
	for i, v := range res.Votes {
		if v.Err != nil || !res.Answered[i] {
			continue
		}
		answered++
		h, ok := v.Value.(holderReply)
		if !ok {
			continue
		}
		hv := seen[h.token]
		if hv == nil {
			hv = &holderVotes{least: h.ttl, records: map[string]int{}}
			seen[h.token] = hv
		}
		hv.n++
		hv.least = min(hv.least, h.ttl)
		if h.record != nil {
			hv.add(h.record)
		}
	}
	for token, hv := range seen {
		if hv.n < l.quorum {
			continue
		}
		left := time.Duration(hv.least) * time.Millisecond
		valid := left - clock.Drift(left, l.driftFactor) - l.clock.Now().Sub(start)
		if valid <= 0 {
			break
		}
		return token, hv, valid, nil
	}
	if answered < l.quorum {
		return "", nil, 0, l.quorumError(opHolder, key, res, nil)
	}
	return "", nil, 0, fmt.Errorf("redlock: holder of %q: %d of %d masters answered, and no token holds a quorum of %d: %w", key, answered, len(l.masters), l.quorum, ErrNotHeld)
}

// newHolderRead is the holder read of the lock named rkey on the masters:
// a call whose every answer is a yes carrying a holderReply (or nil, for
// a master that holds no lock there).
func (l *Locker) newHolderRead(rkey string) *call {
	w := layout.RWKeys(rkey).Writer
	c := l.newCall(opHolder, holderReadScript, rkey, []string{layout.Holder(rkey), w})
	c.vote = holderVote
	return c
}

// holderReply is one master's answer to a holder read.
type holderReply struct {
	token  string
	ttl    int64             // ms
	record map[string]string // its fields, without the token; nil: none
}

// holderVote reads holder_read's reply: a yes carrying a holderReply, or
// nothing where the master holds no lock of the key.
func holderVote(reply any, err error) quorum.Vote {
	if err != nil {
		return quorum.Vote{Err: err}
	}
	r, ok := reply.([]any)
	if !ok || len(r) != 0 && len(r) != 3 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected holder %v", reply)}
	}
	if len(r) == 0 {
		return quorum.Vote{Yes: true}
	}
	ttl, ok1 := r[1].(int64)
	kv, ok2 := r[2].([]any)
	if !ok1 || !ok2 || len(kv)%2 != 0 {
		return quorum.Vote{Err: fmt.Errorf("redlock: unexpected holder %v", reply)}
	}
	h := holderReply{token: replyString(r[0]), ttl: ttl}
	if len(kv) > 0 {
		h.record = make(map[string]string, len(kv)/2-1)
		for i := 0; i < len(kv); i += 2 {
			if k := replyString(kv[i]); k != recordField {
				h.record[k] = replyString(kv[i+1])
			}
		}
	}
	return quorum.Vote{Yes: true, Value: h}
}

// holderVotes counts the masters that hold one token, and its records.
type holderVotes struct {
	n       int
	least   int64 // the shortest TTL among them, in ms
	records map[string]int
	fields  map[string]map[string]string
}

func (hv *holderVotes) add(rec map[string]string) {
	id := fmt.Sprint(metadataArgs(rec))
	if hv.fields == nil {
		hv.fields = map[string]map[string]string{}
	}
	hv.records[id]++
	hv.fields[id] = rec
}

// record is the record that the most masters keep (the first of a tie in
// sorted order); nil when none keeps one.
func (hv *holderVotes) record() map[string]string {
	best, bestN := "", 0
	for id, n := range hv.records {
		if n > bestN || n == bestN && id < best {
			best, bestN = id, n
		}
	}
	return hv.fields[best]
}
