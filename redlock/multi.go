package redlock

// A multi-key lock holds several keys at once, all or none, with one token:
// on each master one script sets every key only when none of them exists
// (multi_acquire.lua), so a master grants either the whole set or nothing,
// and the quorum, validity, retry and release-on-failure rules are those of
// every other lock (Locker.acquire). No master ever holds part of a set, so
// two clients whose sets overlap cannot each hold a part of the other's
// set and wait for the rest: a failed attempt releases what it set and
// retries after a jittered backoff, as Lock does.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/redlock/layout"
)

// LockMulti acquires every one of keys for ttl, all or none, with one token,
// retrying after a failed attempt as Lock does until it succeeds or ctx
// ends. The returned Lock's Key is keys[0] (the key whose release
// announcement wakes it while it waits, and the Key of its errors and
// Observer events); Keys returns them all. Extend and Unlock act on every
// key; Unlock deletes each key that still holds the token and announces
// each one's release.
//
// keys must be non-empty, with no empty key and no key twice; otherwise the
// error matches ErrInvalid and nothing is sent. The lock of a key is the
// same string key a plain Lock sets, so a plain lock of one of the keys and
// a multi-key lock that includes it exclude each other. A multi-key lock
// carries no fencing token (Fence is 0), even with Config.Fencing.
//
// Redis Cluster: a master that is a Redis Cluster runs a script only on
// keys of one hash slot, so there every key must share one hash tag
// ("{order:7}:payment", "{order:7}:stock"). Keys of several slots are
// refused by each such master (a CROSSSLOT error reply: nothing is set) and
// the lock is not acquired; the *QuorumError's NodeErrors say so. The
// Locker cannot tell a Cluster master from a standalone one, so it does not
// refuse such keys itself: on standalone masters they are fine.
func (l *Locker) LockMulti(ctx context.Context, keys []string, ttl time.Duration, opts ...Option) (*Lock, error) {
	return l.acquireMulti(ctx, keys, ttl, true, opts)
}

// TryLockMulti makes one attempt to acquire every one of keys for ttl, all
// or none, as LockMulti does. On failure the error matches ErrNotAcquired
// and is a *QuorumError.
func (l *Locker) TryLockMulti(ctx context.Context, keys []string, ttl time.Duration, opts ...Option) (*Lock, error) {
	return l.acquireMulti(ctx, keys, ttl, false, opts)
}

func (l *Locker) acquireMulti(ctx context.Context, keys []string, ttl time.Duration, retry bool, opts []Option) (*Lock, error) {
	if err := l.checkMultiKeys(keys); err != nil {
		return nil, err
	}
	cc, err := l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	rkeys := make([]string, len(keys)) // their names on the masters; the caller may reuse its slice
	for i, k := range keys {
		rkeys[i] = l.prefix + k
	}
	v := multi(rkeys)
	if cc.metadata != nil {
		record := layout.Holder(rkeys[0]) // the record is the first key's
		if slices.Contains(rkeys, record) {
			return nil, invalid("WithMetadata: key %q is the holder record of the first key, %q", strings.TrimPrefix(record, l.prefix), keys[0])
		}
		v = recordedKind(v, record, cc.metadata)
	}
	return l.acquire(ctx, cc, v, keys[0], ttl, retry)
}

// checkMultiKeys refuses, with ErrInvalid, an empty list, an empty key and
// a key given twice.
func (l *Locker) checkMultiKeys(keys []string) error {
	if len(keys) == 0 {
		return invalid("no keys")
	}
	seen := make(map[string]bool, len(keys))
	for i, k := range keys {
		if err := l.checkKey(k); err != nil {
			return fmt.Errorf("key %d: %w", i, err)
		}
		if seen[k] {
			return invalid("key %q given twice", k)
		}
		seen[k] = true
	}
	return nil
}

// multi is the variant of one multi-key lock of keys.
func multi(keys []string) *variant {
	return &variant{
		kind:        KindMulti,
		explicit:    true,
		keys:        func(string) []string { return keys },
		acquire:     multiAcquireScript,
		extend:      multiExtendScript,
		check:       multiCheckScript,
		release:     multiReleaseScript,
		releaseArgs: []any{ReleaseChannel("")}, // the channels' prefix: each key's is announced
	}
}

// Keys returns the keys the lock holds: those of LockMulti or TryLockMulti,
// in the order given, and for every other lock its one Key.
func (lk *Lock) Keys() []string {
	if !lk.v.explicit {
		return []string{lk.key}
	}
	held := lk.keys
	if lk.v.record {
		held = slices.Delete(slices.Clone(held), 1, 2) // the holder record
	}
	keys := make([]string, len(held))
	for i, k := range held {
		keys[i] = strings.TrimPrefix(k, lk.l.prefix)
	}
	return keys
}
