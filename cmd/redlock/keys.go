package main

import "strings"

// lockKeys names the Redis keys that the lock kinds of package redlock keep
// for the lock named key (see redlock/variant.go, reentrant.go, rwlock.go):
// a plain, fenced or reentrant lock is key itself (a string token, or a
// hash owner -> hold count); a read-write lock is "{key}:w" (the writer's
// token), "{key}:r" (a sorted set of readers by expiry in server
// milliseconds) and "{key}:wq" (the waiting writer's id); the fencing
// counter is "{key}:fence". A key with a hash tag of its own is the prefix
// as it is.
type lockKeys struct {
	key, writer, readers, waiting, fence string
}

func keysOf(key string) lockKeys {
	p := slotPrefix(key)
	return lockKeys{key: key, writer: p + ":w", readers: p + ":r", waiting: p + ":wq", fence: p + ":fence"}
}

// slotPrefix and hasHashTag are copies of the unexported functions of the
// same names in redlock/variant.go: the derived keys must be named exactly
// as the library names them.
func slotPrefix(key string) string {
	if hasHashTag(key) {
		return key
	}
	return "{" + key + "}"
}

func hasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	close := strings.IndexByte(key[open+1:], '}')
	return close > 0
}
