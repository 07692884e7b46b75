// Package redlocktest helps test code that works with quorumlock.
//
// TestNode is a conformance suite for a redlock.Node, in the spirit of
// golang.org/x/net/nettest.TestConn and testing/fstest.TestFS: whoever
// writes a Node for another Redis client calls it from a test, and it
// checks the contract the Locker relies on against real redis-server
// masters that it starts itself.
//
// For tests of code that takes locks, without a redis-server, see the
// module github.com/quorumlock/quorumlock/redlocktest/inmem: in-memory
// masters that run the library's real Lua scripts.
package redlocktest
