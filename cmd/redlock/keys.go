package main

import "github.com/quorumlock/quorumlock/redlock/layout"

// lockKeys names the Redis keys that the lock kinds of package redlock keep
// for the lock named key (package layout is their one home): a plain,
// fenced or reentrant lock is key itself; a read-write lock is "{key}:w",
// "{key}:r" and "{key}:wq"; the fencing counter is "{key}:fence".
type lockKeys struct {
	key, writer, readers, waiting, fence string
}

func keysOf(key string) lockKeys {
	rw := layout.RWKeys(key)
	return lockKeys{key: key, writer: rw.Writer, readers: rw.Readers, waiting: rw.Waiting, fence: layout.Fence(key)}
}
