package master

import (
	"maps"
	"slices"
	"strings"
)

// The keyspace: the three Redis types the lock scripts use (strings,
// hashes, sorted sets), each key with an optional expiry in the master's
// own milliseconds. A key is expired once the master's clock has passed its
// expiry (Redis: now > when), and is then absent to every command; it is
// removed lazily, when a command meets it.

type kind uint8

const (
	kString kind = iota + 1
	kHash
	kZset
)

// entry is one key's value and expiry.
type entry struct {
	kind     kind
	str      string
	hash     map[string]string
	zset     []zmember // sorted by score, then member
	expireAt int64     // master unix ms; 0: none
}

type zmember struct {
	score  float64
	member string
}

// clone returns a deep copy of e.
func (e *entry) clone() *entry {
	c := *e
	if e.hash != nil {
		c.hash = maps.Clone(e.hash)
	}
	if e.zset != nil {
		c.zset = slices.Clone(e.zset)
	}
	return &c
}

// Keyspace is one master's data. It is not safe for concurrent use: the
// master that owns it serialises access.
type Keyspace struct {
	m map[string]*entry
	// log, when not nil, receives every write as the key's new entry (a
	// copy, nil for a deletion), for persistence and replication.
	log func(key string, e *entry)
}

// NewKeyspace returns an empty keyspace.
func NewKeyspace() *Keyspace { return &Keyspace{m: make(map[string]*entry)} }

// get returns the live entry of key at now (master ms), removing an
// expired one.
func (ks *Keyspace) get(key string, now int64) *entry {
	e := ks.m[key]
	if e == nil {
		return nil
	}
	if e.expireAt != 0 && now > e.expireAt {
		delete(ks.m, key) // lazy expiry, as Redis does; no write to log
		return nil
	}
	return e
}

// put stores e under key and logs the write.
func (ks *Keyspace) put(key string, e *entry) {
	ks.m[key] = e
	if ks.log != nil {
		ks.log(key, e.clone())
	}
}

// touched logs a write that changed e in place.
func (ks *Keyspace) touched(key string, e *entry) {
	if ks.log != nil {
		ks.log(key, e.clone())
	}
}

// del removes key and logs the deletion; it reports whether a live key
// was there.
func (ks *Keyspace) del(key string, now int64) bool {
	if ks.get(key, now) == nil {
		return false
	}
	delete(ks.m, key)
	if ks.log != nil {
		ks.log(key, nil)
	}
	return true
}

// apply sets key to e (a copy is kept), or deletes it for nil, without
// logging: a replica or a disk applying the master's writes.
func (ks *Keyspace) apply(key string, e *entry) {
	if e == nil {
		delete(ks.m, key)
		return
	}
	ks.m[key] = e.clone()
}

// Clone returns a deep copy of ks, without its log.
func (ks *Keyspace) Clone() *Keyspace {
	c := &Keyspace{m: make(map[string]*entry, len(ks.m))}
	for k, e := range ks.m {
		c.m[k] = e.clone()
	}
	return c
}

// Len is the number of keys stored, expired ones not yet removed included.
func (ks *Keyspace) Len() int { return len(ks.m) }

// Item is one live key as Dump shows it.
type Item struct {
	Key string
	// Type is "string", "hash" or "zset".
	Type string
	// Str is a string's value; Hash a hash's fields; Zset a sorted set's
	// members with their scores, in order.
	Str  string
	Hash map[string]string
	Zset []ZMember
	// ExpireAt is the expiry in the master's unix ms; 0: none.
	ExpireAt int64
}

// ZMember is one member of a sorted set with its score.
type ZMember struct {
	Member string
	Score  float64
}

// Dump returns the live keys at now (master ms) whose name has prefix,
// sorted by name; it changes nothing.
func (ks *Keyspace) Dump(prefix string, now int64) []Item {
	var out []Item
	for k, e := range ks.m {
		if !strings.HasPrefix(k, prefix) || (e.expireAt != 0 && now > e.expireAt) {
			continue
		}
		out = append(out, e.item(k))
	}
	slices.SortFunc(out, func(a, b Item) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Item returns key's entry as Dump would list it, and whether it exists
// (and has not expired) at now: one key, without a pass over the
// keyspace.
func (ks *Keyspace) Item(key string, now int64) (Item, bool) {
	e, ok := ks.m[key]
	if !ok || (e.expireAt != 0 && now > e.expireAt) {
		return Item{}, false
	}
	return e.item(key), true
}

// item is e, named k, as an Item.
func (e *entry) item(k string) Item {
	it := Item{Key: k, ExpireAt: e.expireAt}
	switch e.kind {
	case kString:
		it.Type, it.Str = "string", e.str
	case kHash:
		it.Type, it.Hash = "hash", maps.Clone(e.hash)
	case kZset:
		it.Type = "zset"
		for _, z := range e.zset {
			it.Zset = append(it.Zset, ZMember{Member: z.member, Score: z.score})
		}
	}
	return it
}

// zsetFind returns the index of member in z, or -1.
func zsetFind(z []zmember, member string) int {
	for i := range z {
		if z[i].member == member {
			return i
		}
	}
	return -1
}

// zsetLess orders sorted-set members as Redis does: by score, then member.
func zsetLess(a, b zmember) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return a.member < b.member
}

// zsetInsert inserts m into z in order (m not in z).
func zsetInsert(z []zmember, m zmember) []zmember {
	i := 0
	for i < len(z) && zsetLess(z[i], m) {
		i++
	}
	z = append(z, zmember{})
	copy(z[i+1:], z[i:])
	z[i] = m
	return z
}
