// Package layout names the Redis keys that each lock kind of package redlock
// keeps on a master, and the fields inside them. It is the one home of that
// layout: the library builds its keys here, and tools that look at a
// master's state (cmd/redlock's inspect and unlock) read them from here, so
// that the two never drift apart.
//
// For a lock named key, with p the key itself when it has a Redis Cluster
// hash tag of its own and "{key}" otherwise (SlotPrefix), so that every key
// shares key's hash slot:
//
//   - a plain or fenced lock, and a fair lock's lock: key, a string holding
//     the holder's token, with the lock's TTL;
//   - a reentrant lock: key, a hash with the field "owner" (the owner) and
//     one field "h:<hold id>" per hold, with the lock's TTL;
//   - a read-write lock: p+":w" (the writer's token), p+":r" (a sorted set
//     of reader tokens scored by their expiry in the master's milliseconds)
//     and p+":wq" (the waiting writer's id);
//   - a fair lock's queue: p+":fair:queue" (waiter id -> ticket),
//     p+":fair:expiry" (waiter id -> expiry) and p+":fair:ticket" (the
//     ticket counter);
//   - a semaphore's permits: p+":permit:<i>", each a plain lock;
//   - a multi-key lock: its keys, each a plain lock's string;
//   - the fencing counter: p+":fence";
//   - tombstones: Tomb(first, id), "<SlotPrefix(first)>:tomb:<id>", left by
//     a release that did not find the hold id it releases (so that the
//     acquire, if it is still on its way, is refused), with a TTL;
//   - the holder record of a lock acquired WithMetadata (and of every
//     reentrant lock whose owner gave one): p+":holder" (Holder) for the
//     lock's first key p (the lock key, a reentrant lock's hash, a read-
//     write lock's writer key, a semaphore's permit, a multi-key lock's
//     first key), a hash with the field "token" (the holder's token, a
//     reentrant lock's owner) and the caller's fields, with the lock's
//     TTL. "redlock run" keeps its host, pid, start time and note there.
//
// And once per master, whatever the lock, with the Locker's key prefix in
// front (Config.KeyPrefix, "" by default):
//
//   - the restart guard's record (Registry), prefix+"{quorumlock}:guard":
//     a hash with the fields "run" (the run id a client registered for
//     the master), "fsync" ("always" when that run persisted every write)
//     and "ttl" (the longest TTL in ms any client recorded on it); it
//     never expires;
//   - the durable confirmations' probe (Probe), prefix+"{quorumlock}:probe":
//     a counter with a TTL of a minute.
package layout

import (
	"strconv"
	"strings"
)

// SlotPrefix is key itself if it has a hash tag, else key as the hash tag:
// keys that extend it stay in key's hash slot.
func SlotPrefix(key string) string {
	if HasHashTag(key) {
		return key
	}
	return "{" + key + "}"
}

// HasHashTag reports whether Redis Cluster would hash only a {tag} of key.
func HasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	close := strings.IndexByte(key[open+1:], '}')
	return close > 0
}

// Derivable reports whether keys derived from key (SlotPrefix plus a
// suffix) share its Redis Cluster hash slot: every key but one without a
// hash tag of its own that contains '}' (as in "a}b" or "{}x"), for Redis
// Cluster hashes that whole key, while a tag "{key}" would end at its first
// '}'.
func Derivable(key string) bool {
	return HasHashTag(key) || strings.IndexByte(key, '}') < 0
}

// Fence names the fencing counter of key.
func Fence(key string) string { return SlotPrefix(key) + ":fence" }

// Tomb names the tombstone of the hold id among the keys whose first is
// first (the lock key, the writer key, a permit, a multi-key lock's first
// key), in its hash slot.
func Tomb(first, id string) string { return SlotPrefix(first) + TombInfix + id }

// TombInfix is what every tombstone's name contains.
const TombInfix = ":tomb:"

// IsTomb reports whether k is a tombstone's name.
func IsTomb(k string) bool { return strings.Contains(k, TombInfix) }

// RW are the keys of a read-write lock.
type RW struct {
	Writer, Readers, Waiting string
}

// RWKeys names the keys of the read-write lock key.
func RWKeys(key string) RW {
	p := SlotPrefix(key)
	return RW{Writer: p + ":w", Readers: p + ":r", Waiting: p + ":wq"}
}

// Fair are the keys of a fair lock's queue (its lock is the key itself).
type Fair struct {
	Queue, Expiry, Ticket string
}

// FairKeys names the queue keys of the fair lock key.
func FairKeys(key string) Fair {
	p := SlotPrefix(key)
	return Fair{Queue: p + ":fair:queue", Expiry: p + ":fair:expiry", Ticket: p + ":fair:ticket"}
}

// Permit names permit i of the semaphore key.
func Permit(key string, i int) string { return SlotPrefix(key) + PermitInfix + strconv.Itoa(i) }

// PermitInfix is what every semaphore permit's name contains, before its
// number.
const PermitInfix = ":permit:"

// The fields of a reentrant lock's hash: OwnerField holds the owner, and
// each hold is a field HoldPrefix+<hold id> holding "1".
const (
	OwnerField = "owner"
	HoldPrefix = "h:"
)

// Registry names the restart guard's record on a master, for the key
// prefix prefix.
func Registry(prefix string) string { return prefix + "{quorumlock}:guard" }

// The fields of the restart guard's record.
const (
	RegistryRun   = "run"
	RegistryFsync = "fsync"
	RegistryTTL   = "ttl"
)

// Probe names the key that a durable confirmation writes before it waits
// for the master's writes to be durable, for the key prefix prefix.
func Probe(prefix string) string { return prefix + "{quorumlock}:probe" }

// ReleaseChannel is the pub/sub channel on which a master announces that
// the lock named key was released (wake on release).
func ReleaseChannel(key string) string { return "quorumlock:released:" + key }

// Holder names the holder record kept beside the lock key key while its
// holder holds it (redlock.WithMetadata): a hash of who holds the lock
// (the field "token" and the holder's own, such as the host, the process,
// since when, a note: "redlock run"'s), with the lock's TTL, in key's hash
// slot.
func Holder(key string) string { return SlotPrefix(key) + HolderSuffix }

// HolderSuffix is what a holder record's name ends with, after the slot
// prefix of its lock key.
const HolderSuffix = ":holder"

// ChangeChannel is the pub/sub channel on which a master announces that
// the holder record of the lock named key was replaced.
func ChangeChannel(key string) string { return "quorumlock:changed:" + key }
