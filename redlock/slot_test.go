package redlock_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/internal/redistest"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// hashedPart is the part of key that Redis Cluster hashes: the hash tag
// between the first '{' and the first '}' after it, when non-empty, else the
// whole key.
func hashedPart(key string) string {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if close := strings.IndexByte(key[open+1:], '}'); close > 0 {
			return key[open+1 : open+1+close]
		}
	}
	return key
}

// keySlot is Redis Cluster's slot of key: CRC16 (XMODEM) of its hashed part,
// modulo 16384.
func keySlot(key string) int {
	var crc uint16
	for _, b := range []byte(hashedPart(key)) {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// braceKeys returns every non-empty string of '{', '}' and 'a' up to n long.
func braceKeys(n int) []string {
	out, level := []string{}, []string{""}
	for range n {
		var next []string
		for _, p := range level {
			for _, c := range []string{"{", "}", "a"} {
				next = append(next, p+c)
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

// Defect 8 of issue 8: every key a lock kind derives from a key ("{key}:fence",
// "{key}:w", ...) shares the key's hash slot, or the key is refused with
// ErrInvalid. Exhaustive over short strings of braces.
func TestDerivedKeysShareTheSlot(t *testing.T) {
	refused := 0
	for _, key := range braceKeys(7) {
		derived := append([]string{redlock.FenceKey(key)}, redlock.RWKeys(key)...)
		if err := redlock.CheckDerivable(key); err != nil {
			if !errors.Is(err, redlock.ErrInvalid) {
				t.Fatalf("CheckDerivable(%q) = %v, want ErrInvalid", key, err)
			}
			// Refused only when a derived key would hash otherwise.
			if hashedPart(derived[0]) == hashedPart(key) {
				t.Fatalf("%q refused, but %q shares its hashed part", key, derived[0])
			}
			refused++
			continue
		}
		for _, d := range derived {
			if keySlot(d) != keySlot(key) || hashedPart(d) != hashedPart(key) {
				t.Fatalf("key %q (slot %d) derives %q (slot %d)", key, keySlot(key), d, keySlot(d))
			}
		}
	}
	if refused == 0 {
		t.Fatal("no key refused: the test misses the keys that cannot share a slot")
	}
}

// clusterShard starts a real redis-server in cluster mode that serves every
// slot, and waits until it takes commands.
func clusterShard(t *testing.T) *pool.Node {
	t.Helper()
	s := redistest.Start(t, 1, redisproc.Options{Args: []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"}})[0]
	n := pool.New(pool.Config{Addr: s.Addr()})
	t.Cleanup(func() { n.Close() })
	if _, err := n.Do(t.Context(), "CLUSTER", "ADDSLOTSRANGE", 0, 16383); err != nil {
		t.Fatal(err)
	}
	await(t, "the cluster shard to come up", func() bool {
		info, _ := redis.String(n.Do(t.Context(), "CLUSTER", "INFO"))
		return strings.Contains(info, "cluster_state:ok")
	})
	return n
}

// On a real Cluster shard: the reference slot agrees with CLUSTER KEYSLOT,
// fenced and read-write locks work for keys with braces whose derived keys
// share the slot, and the others are refused with ErrInvalid without
// traffic, not with CROSSSLOT.
func TestClusterShardSlots(t *testing.T) {
	n := clusterShard(t)
	for _, key := range braceKeys(5) {
		slot, err := redis.Int(n.Do(t.Context(), "CLUSTER", "KEYSLOT", key))
		if err != nil {
			t.Fatal(err)
		}
		if slot != keySlot(key) {
			t.Fatalf("CLUSTER KEYSLOT %q = %d, reference %d", key, slot, keySlot(key))
		}
	}
	sp := &spy{Node: n}
	l := newLocker(t, []redlock.Node{sp}, redlock.Config{Fencing: true})
	kinds := map[string]func(key string) (*redlock.Lock, error){
		"fenced": func(key string) (*redlock.Lock, error) { return l.TryLock(t.Context(), key, time.Minute) },
		"writer": func(key string) (*redlock.Lock, error) { return l.RWMutex(key).TryLock(t.Context(), time.Minute) },
		"reader": func(key string) (*redlock.Lock, error) { return l.RWMutex(key).TryRLock(t.Context(), time.Minute) },
		"reentrant": func(key string) (*redlock.Lock, error) {
			return l.Reentrant(key, "o").TryLock(t.Context(), time.Minute)
		},
	}
	for name, lock := range kinds {
		for _, key := range []string{"a}b", "{}x", "}{"} {
			before := sp.calls.Load()
			if _, err := lock(key); !errors.Is(err, redlock.ErrInvalid) {
				t.Errorf("%s %q on a Cluster shard: %v, want ErrInvalid", name, key, err)
			}
			if sp.calls.Load() != before {
				t.Errorf("%s %q: refused key sent commands", name, key)
			}
		}
		for _, key := range []string{"plain", "{tag}x", "a{b", "{"} {
			lk, err := lock(name + key)
			if err != nil {
				t.Fatalf("%s %q on a Cluster shard: %v", name, name+key, err)
			}
			if err := lk.Extend(t.Context(), time.Minute); err != nil {
				t.Fatalf("%s %q: Extend: %v", name, name+key, err)
			}
			if err := lk.Unlock(t.Context()); err != nil {
				t.Fatalf("%s %q: Unlock: %v", name, name+key, err)
			}
		}
	}
}
