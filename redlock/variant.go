package redlock

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// variant is how one kind of lock keeps its state on a master: its keys,
// and its acquire, extend and release scripts. Every variant shares the
// quorum, validity, retry, renewal and release-on-failure rules.
//
// Tombstones keep a late acquire from landing after its release, whatever
// carried it: every acquisition has an identity of its own on the masters
// (a fresh token per attempt; for a reentrant hold, a hold id), every
// release that does not find that identity's state leaves a tombstone
// (tombKey) for it, and every acquire that finds its tombstone changes
// nothing. A release may therefore go out at any time, also before the
// acquire it follows reached the master (it left on another connection, a
// reconnect, an EVAL sent after NOSCRIPT): the acquire cannot land after
// it. A tombstone lives tombstoneLife or the lock's TTL, whichever is
// longer, and blocks nobody; an acquire held up for longer than that would
// set its key for its TTL with no holder, a delay for the others, never a
// second holder.
type variant struct {
	// kind names the variant to an Observer: KindLock, KindFenced,
	// KindReentrant, KindRead, KindWrite, KindFair, KindSemaphore or
	// KindMulti.
	kind string
	// owner, when not "", is a reentrant lock's owner: Lock.Token returns
	// it, while each hold's identity on the masters is a fresh hold id.
	owner string
	// keys returns the Redis keys of the lock named key; keys[0] is the
	// key whose presence means "held". All share one hash slot.
	keys func(key string) []string
	// oneKey: keys returns just the key (the Locker then keeps it without
	// an allocation of its own).
	oneKey bool
	// acquire, extend and release follow the conventions of scripts.go;
	// acquireArgs and releaseArgs are the kind's own arguments, after the
	// common ones. acquire and release answer a count: > 0 yes, 0 no. A
	// yes to acquire may carry the fencing counter.
	acquire, extend, release script
	acquireArgs, releaseArgs []any
	// check reads, changing nothing, how long the master still holds the
	// acquisition (Lock.Check): the remaining TTL in ms, 0 where it does
	// not hold it. It takes an extend's keys and token, without a TTL.
	check script
	// fenced: the yes votes carry fencing counters to combine and write
	// back before the lock is granted; the counter is the last of keys.
	fenced bool
	// record: the variant keeps a holder record (WithMetadata), its keys'
	// second; recordArgs are the fields an acquire writes to it, after
	// every other argument.
	record     bool
	recordArgs []any
	// unqueued keeps the variant's Lock calls out of the Locker's
	// per-key FIFO: a reentrant owner's nested Lock must never wait
	// behind other waiters for a lock its owner holds.
	unqueued bool
	// explicit: keys returns the caller's own keys (LockMulti), checked by
	// the caller, not keys derived from key: no derived-key slot check,
	// and they share a hash slot only if the caller gave them one.
	explicit bool
	// giveUp, if set, is sent to every master, with a release's
	// arguments, when an acquisition fails for good (TryLock's one
	// attempt, or Lock's last): a waiting writer's withdrawal, a fair
	// waiter's leave.
	giveUp *script
}

// tombstoneLife is the shortest life of a tombstone: longer than any
// plausible delay of a command on its way to a master (a TCP
// retransmission, a reconnect, a stalled connection's timeout).
const tombstoneLife = time.Minute

// tombKey names the tombstone of identity id among the keys whose first is
// first, in its hash slot.
func tombKey(first, id string) string { return layout.Tomb(first, id) }

// tombMS is the lifetime, in ms, of a tombstone for a lock with ttl.
func tombMS(ttl time.Duration) int64 { return max(ttl, tombstoneLife).Milliseconds() }

// acquireCall is v's acquire of keys with token for ms, for every node; a
// fenced one gets the fencing counter's lifetime last. It grants ms: the
// restart guard judges it (guard.go).
func (l *Locker) acquireCall(v *variant, keys []string, token string, ms int64) *call {
	c := l.newCall(opLock, v.acquire, tombKey(keys[0], token), keys, token, ms)
	l.grants(c, ms)
	c.acquire = true
	c.prepared = append(c.prepared, v.acquireArgs...)
	if v.fenced {
		c.prepared = append(c.prepared, fenceMS(ms))
	}
	c.prepared = append(c.prepared, v.recordArgs...)
	return c
}

// extendCall is s, an extend of the acquisition whose head is head (see
// headOf), to ms: an Extend, a renewal or a Resume. It grants ms as an
// acquire does: a master that restarts may have held the lock that long.
func (l *Locker) extendCall(op string, s script, head []any, ms int64) *call {
	c := l.headCall(op, s, head, ms)
	l.grants(c, ms)
	return c
}

// head returns the part of c's argument list that every call of its
// acquisition shares, after the script's digest: the number of keys, the
// tombstone, the keys and the token, each boxed once. An acquisition keeps
// its acquire's (Lock.head), and its releases and extends reuse it.
func (c *call) head(keys []string) []any { return c.prepared[1 : 4+len(keys)] }

// headOf is the head (see call.head) of the acquisition of keys with
// token, for a call that has no acquire to take it from.
func (l *Locker) headOf(keys []string, token string) []any {
	h := make([]any, 0, 3+len(keys))
	h = append(h, 1+len(keys), tombKey(keys[0], token))
	for _, k := range keys {
		h = append(h, k)
	}
	return append(h, token)
}

// headCall makes a call of s whose argument list is head and then args.
func (l *Locker) headCall(op string, s script, head []any, args ...any) *call {
	c := &call{l: l, op: op, s: s, vote: countVote}
	prepared := c.buf[:0]
	if size := 1 + len(head) + len(args); size > len(c.buf) {
		prepared = make([]any, 0, size)
	}
	prepared = append(append(prepared, s.hashArg), head...)
	c.prepared = append(prepared, args...)
	return c
}

// grants marks c as a call whose yes grants the lock for ms: the restart
// guard judges it, and with Config.Durability it counts once confirmed.
func (l *Locker) grants(c *call, ms int64) {
	c.grant = ms
	if l.durability.on() {
		c.confirms, c.timeout = true, l.nodeTimeout+l.durability.Timeout
	}
}

// releaseCall is s, v's release or giveUp, of the acquisition whose head
// is head (see call.head), announced on channel unless that is "".
func (l *Locker) releaseCall(op string, v *variant, s script, head []any, channel string, ttl time.Duration) *call {
	c := l.headCall(op, s, head, channel, tombMS(ttl))
	c.prepared = append(c.prepared, v.releaseArgs...)
	c.retriable(ttl)
	return c
}

// unsettled reports whether a failed attempt must release a master whose
// acquire voted vote (answered tells whether it answered in time): unless
// the master refused, the acquire may have landed, or may still.
func unsettled(vote quorum.Vote, answered bool) bool {
	return !answered || vote.Yes || vote.Err != nil
}

var plain = &variant{
	kind:    KindLock,
	keys:    func(key string) []string { return []string{key} },
	oneKey:  true,
	acquire: acquireScript,
	extend:  extendScript,
	check:   checkScript,
	release: releaseScript,
}

var fenced = &variant{
	kind:    KindFenced,
	keys:    func(key string) []string { return []string{key, fenceKey(key)} },
	acquire: fenceAcquireScript,
	extend:  extendScript,
	check:   checkScript,
	release: releaseScript,
	fenced:  true,
}

// giveUp sends v's giveUp, if it has one, to every master, and waits for a
// quorum of the replies (or the node timeout); ctx's end does not stop it.
// rkey is the lock's name on the masters (with Config.KeyPrefix).
func (l *Locker) giveUp(ctx context.Context, v *variant, rkey string, keys []string, token string, ttl time.Duration) {
	if v.giveUp == nil {
		return
	}
	l.fanOut(context.WithoutCancel(ctx), l.releaseCall(opRelease, v, *v.giveUp, l.headOf(keys, token), ReleaseChannel(rkey), ttl))
}

// ReleaseChannel is the pub/sub channel on which a master announces that
// the lock named key was released (wake on release).
func ReleaseChannel(key string) string { return layout.ReleaseChannel(key) }

// fenceKey names the persistent fencing counter of key, in key's hash slot.
func fenceKey(key string) string { return layout.Fence(key) }

// checkDerivable refuses, with ErrInvalid, a key that no derived key can
// share a hash slot with (see layout.Derivable).
func checkDerivable(key string) error {
	if !layout.Derivable(key) {
		return invalid("key %q: its derived keys (tombstones, fencing counter, read-write state) cannot share its Redis Cluster hash slot; give it a hash tag of its own, or drop the '}'", key)
	}
	return nil
}
