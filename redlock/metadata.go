package redlock

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/quorumlock/quorumlock/redlock/internal/recorded"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// Holder metadata: a lock taken WithMetadata keeps, beside its first key
// on every master that grants it, a holder record (layout.Holder, the hash
// "{KEY}:holder" that redlock run and inspect read): the holder's token
// and the caller's fields. It is written by the acquire script itself,
// extended by every Extend and renewal with the lock key, and deleted by
// its release, so that a record never outlives its lock on a master and
// never names a lock that is not its token's. Plain and fenced locks do
// it in their own scripts; every other kind runs its scripts in the modes
// of internal/recorded (recordedKind). Locker.Holder reads it back from a
// quorum.

// MaxMetadataLen is the most bytes WithMetadata's fields may take, names
// and values together: the record travels with every acquire.
const MaxMetadataLen = 4 << 10

// recordField is the holder record's own field: the lock's token. No
// metadata field may take its name.
const recordField = "token"

// WithMetadata makes an acquisition keep md, who holds the lock (a host,
// a process id, a request id), in a holder record beside the lock on the
// masters, for as long as the lock holds: Lock.Metadata returns it,
// Locker.Holder reads it from a quorum, and redlock inspect prints it.
// The map is copied. Field names must be non-empty and not "token"; names
// and values together take at most MaxMetadataLen bytes; a bad md is
// refused with ErrInvalid, and nothing is sent.
//
// Every exclusive kind keeps one: Lock, TryLock and Do; a Reentrant lock
// (the record is its owner's: a hold WithMetadata writes it, every hold
// keeps it as long as the hash, and the last Unlock deletes it); an
// RWMutex's write lock; a Fair lock; LockMulti (the record is its first
// key's). A Semaphore keeps one per permit, beside the permit's key. A
// read hold is shared, keeps none, and refuses WithMetadata (ErrInvalid).
// Resume replaces the record's fields with md (see Resume).
func WithMetadata(md map[string]string) Option {
	return func(c *callConfig) {
		if err := checkMetadata(md); err != nil {
			c.setBad(err)
			return
		}
		c.metadata = maps.Clone(md)
		if c.metadata == nil {
			c.metadata = map[string]string{}
		}
	}
}

// checkMetadata refuses, with ErrInvalid, fields that a holder record
// cannot keep.
func checkMetadata(md map[string]string) error {
	size := 0
	for k, v := range md {
		switch k {
		case "":
			return invalid("WithMetadata: an empty field name")
		case recordField:
			return invalid("WithMetadata: field %q is the record's own (the lock's token)", k)
		}
		size += len(k) + len(v)
	}
	if size > MaxMetadataLen {
		return invalid("WithMetadata: %d bytes of fields: the most is %d", size, MaxMetadataLen)
	}
	return nil
}

// metadataArgs is md as a script's field, value pairs, in a stable order.
func metadataArgs(md map[string]string) []any {
	args := make([]any, 0, 2*len(md))
	for _, k := range slices.Sorted(maps.Keys(md)) {
		args = append(args, k, md[k])
	}
	return args
}

// recordedPlain and recordedFenced are plain and fenced with a holder
// record: it is the second key (before the fencing counter, which stays
// last), the acquire writes it, the extend moves its expiry with the lock
// key's and the release deletes it.
var (
	recordedPlain  = withRecordKey(plain, func(key string) []string { return []string{key, layout.Holder(key)} })
	recordedFenced = withRecordKey(fenced, func(key string) []string { return []string{key, layout.Holder(key), fenceKey(key)} })
)

func withRecordKey(v *variant, keys func(string) []string) *variant {
	r := *v
	r.keys, r.oneKey = keys, false
	r.extend = extendRecordScript
	r.releaseArgs, r.record = []any{"record"}, true
	return &r
}

// withRecord is v, recordedPlain or recordedFenced, acquiring with md's
// fields: a variant of the call's own.
func withRecord(v *variant, md map[string]string) *variant {
	r := *v
	r.recordArgs = metadataArgs(md)
	return &r
}

// recordedKind is v, a lock kind whose scripts keep no holder record, run
// as a lock with one (internal/recorded): the record, named record
// (layout.Holder of the lock's name, or of a semaphore's permit), is its
// keys' second (the fencing counter stays last), and each of its scripts
// runs in the mode of a lock with a record. Its acquire writes md's
// fields to the record; with md nil it keeps the record as it finds it (a
// reentrant hold without metadata, whose owner's record another hold may
// have written), and every script syncs it.
func recordedKind(v *variant, record string, md map[string]string) *variant {
	r := *v
	keys := v.keys
	r.keys = func(key string) []string {
		return slices.Insert(slices.Clone(keys(key)), 1, record)
	}
	r.oneKey = false
	r.acquire = inMode(v.acquire, recorded.Acquire)
	r.extend = inMode(v.extend, recorded.Sync)
	r.release = inMode(v.release, recorded.Sync)
	r.check = inMode(v.check, recorded.Read)
	if v.giveUp != nil {
		giveUp := inMode(*v.giveUp, recorded.Sync)
		r.giveUp = &giveUp
	}
	r.record = true
	fields := -1 // no fields: the acquire keeps the record as it finds it
	if md != nil {
		fields = 2 * len(md)
	}
	r.recordArgs = append(metadataArgs(md), fields)
	return &r
}

// Metadata returns a copy of the fields the lock was acquired with
// (WithMetadata), as last set by SetMetadata; nil for a lock acquired
// without (a reentrant hold without metadata, whose owner's record another
// hold may keep, and a lock resumed without, included).
func (lk *Lock) Metadata() map[string]string {
	lk.mu.Lock()
	defer lk.mu.Unlock()
	return maps.Clone(lk.metadata)
}

// SetMetadata replaces the fields of the lock's holder record with md on
// every master that still holds the lock, and announces the change on the
// key's change channel (ChangeChannel). It succeeds when a quorum did so;
// otherwise the error matches ErrLockLost (a *QuorumError, Op "metadata")
// and the masters may hold either record. It neither extends the lock nor
// changes Until. A reentrant hold replaces its owner's record. Only a
// lock that keeps a record can replace one (acquired WithMetadata, any
// reentrant hold, a resumed lock): on any other, and for a bad md, the
// error matches ErrInvalid and nothing is sent.
func (lk *Lock) SetMetadata(ctx context.Context, md map[string]string) error {
	l := lk.l
	if err := l.checkMade(); err != nil {
		return err
	}
	if ctx == nil {
		return invalid("nil context")
	}
	if !lk.v.record {
		return invalid("SetMetadata: lock %q was acquired without WithMetadata and keeps no holder record", lk.key)
	}
	if err := checkMetadata(md); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return l.quorumError(opMetadata, lk.key, nil, err)
	}
	lk.mu.Lock()
	ended := lk.err
	lk.mu.Unlock()
	if ended != nil {
		return fmt.Errorf("redlock: set metadata of %q: %w", lk.key, errors.Join(ended, ErrLockLost))
	}
	args := append([]any{ChangeChannel(lk.keys[0])}, metadataArgs(md)...)
	res, err := l.fanOut(ctx, l.headCall(opMetadata, recordWriteScript, lk.head, args...))
	if err == nil && res.OK() {
		lk.mu.Lock()
		lk.metadata = maps.Clone(md)
		if lk.metadata == nil {
			lk.metadata = map[string]string{}
		}
		lk.mu.Unlock()
		return nil
	}
	return l.quorumError(opMetadata, lk.key, res, err)
}

// ChangeChannel is the pub/sub channel on which a master announces that
// the holder record of the lock named key (with Config.KeyPrefix) was
// replaced (Lock.SetMetadata, Election.Proclaim).
func ChangeChannel(key string) string { return layout.ChangeChannel(key) }
