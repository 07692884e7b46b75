package redlock

import (
	"context"
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/quorum"
)

// variant is how one kind of lock keeps its state on a master: its keys,
// how it is acquired, and its extend and release scripts. Every variant
// shares the quorum, validity, retry, renewal and release-on-failure rules.
type variant struct {
	// kind names the variant to an Observer: KindLock, KindFenced,
	// KindReentrant, KindRead or KindWrite.
	kind string
	// owned: the token is the caller's (a reentrant owner), never empty.
	owned bool
	// keys returns the Redis keys of the lock named key; keys[0] is the
	// key whose presence means "held". All share one hash slot.
	keys func(key string) []string
	// oneKey: keys returns just the key (the Locker then keeps it without
	// an allocation of its own).
	oneKey bool
	// acquire returns one attempt's acquire step, which tries the lock on
	// one master; the arguments are built once per attempt, not per
	// master. A yes vote may carry an int64 Value (the fencing counter).
	acquire func(keys []string, token string, ms int64) *call
	// extend (ARGV token, ms) and release (ARGV token, channel, then
	// releaseArg if set) answer a count: > 0 yes, 0 no.
	extend, release script
	releaseArg      any
	// fenced: the yes votes carry fencing counters to combine and write
	// back before the lock is granted; the counter is the last of keys.
	fenced bool
	// keepUncertain: after a failed attempt, release only the masters
	// that said yes, not those whose answer is unknown. For locks whose
	// release undoes a count, where releasing an acquire that never
	// landed would undo an earlier hold.
	keepUncertain bool
	// unqueued keeps the variant's Lock calls out of the Locker's
	// per-key FIFO: a reentrant owner's nested Lock must never wait
	// behind other waiters for a lock its owner holds.
	unqueued bool
	// explicit: keys returns the caller's own keys (LockMulti), checked by
	// the caller, not keys derived from key: no derived-key slot check,
	// and they share a hash slot only if the caller gave them one.
	explicit bool
	// giveUp, if set, runs when an acquisition fails for good (TryLock's
	// one attempt, or Lock's last).
	giveUp func(ctx context.Context, l *Locker, key string, keys []string, acks *acks)
}

// acquire makes a script, called with (token, ms), a variant's acquire.
func (s script) acquire(keys []string, token string, ms int64) *call {
	return s.with(keys, token, ms)
}

// releaseArgs are the release script's arguments; channel "" announces
// nothing.
func (v *variant) releaseArgs(channel, token string) []any {
	if v.releaseArg != nil {
		return []any{token, channel, v.releaseArg}
	}
	return []any{token, channel}
}

// releases reports whether a failed attempt releases a master that voted
// vote.
func (v *variant) releases(vote quorum.Vote) bool {
	return vote.Yes || (vote.Err != nil && !v.keepUncertain)
}

var plain = &variant{
	kind:   KindLock,
	keys:   func(key string) []string { return []string{key} },
	oneKey: true,
	acquire: func(keys []string, token string, ms int64) *call {
		c := &call{cmd: "SET", vote: setVote}
		c.buf[0], c.buf[1], c.buf[2], c.buf[3], c.buf[4] = keys[0], token, "NX", "PX", ms
		c.args = c.buf[:5]
		return c
	},
	extend:  extendScript,
	release: releaseScript,
}

// setVote reads the reply of SET NX: "OK" is a grant and nil a refusal (the
// key exists). Anything else, such as the "QUEUED" of a connection left in
// MULTI, is a failed vote: the command did not run as sent.
func setVote(reply any, err error) quorum.Vote {
	switch {
	case err != nil:
		return quorum.Vote{Err: err}
	case reply == nil:
		return quorum.Vote{}
	case reply == "OK":
		return quorum.Vote{Yes: true}
	}
	return quorum.Vote{Err: fmt.Errorf("redlock: unexpected SET reply %v", reply)}
}

var fenced = &variant{
	kind:    KindFenced,
	keys:    func(key string) []string { return []string{key, fenceKey(key)} },
	acquire: fenceAcquireScript.acquire,
	extend:  extendScript,
	release: releaseScript,
	fenced:  true,
}

// ReleaseChannel is the pub/sub channel on which a master announces that
// the lock named key was released (wake on release).
func ReleaseChannel(key string) string { return "quorumlock:released:" + key }

// fenceKey names the persistent fencing counter of key, in key's hash slot.
func fenceKey(key string) string { return slotPrefix(key) + ":fence" }

// slotPrefix is key itself if it has a hash tag, else key as the hash tag:
// keys that extend it stay in key's hash slot.
func slotPrefix(key string) string {
	if hasHashTag(key) {
		return key
	}
	return "{" + key + "}"
}

// checkDerivable refuses, with ErrInvalid, a key that no derived key can
// share a hash slot with: one without a hash tag of its own that contains
// '}' (as in "a}b" or "{}x"), for Redis Cluster hashes the whole key, while
// a tag "{key}" would end at its first '}'. Every other key's derived keys
// (slotPrefix) hash like the key itself.
func checkDerivable(key string) error {
	if !hasHashTag(key) && strings.IndexByte(key, '}') >= 0 {
		return invalid("key %q: its derived keys (fencing counter, read-write state) cannot share its Redis Cluster hash slot; give it a hash tag of its own, or drop the '}'", key)
	}
	return nil
}

// hasHashTag reports whether Redis Cluster would hash only a {tag} of key.
func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	close := strings.IndexByte(key[open+1:], '}')
	return close > 0
}
