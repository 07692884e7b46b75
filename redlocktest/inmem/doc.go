// Package inmem provides in-memory Redis masters for tests of code that
// takes quorumlock locks, without a redis-server.
//
// Each master is a github.com/alicebob/miniredis/v2 server on a loopback
// port, reached through a *pool.Node exactly as a real master would be, so
// the Locker runs its real Lua scripts (EVALSHA with EVAL fallback),
// release announcements (PUBLISH/SUBSCRIBE, wake on release) and
// expiry. Keys expire in real time (miniredis's ClockTTL), and the
// scripts read the masters' TIME, so a lock that is neither extended nor
// released ends when its TTL passes, as on Redis.
//
// It lives in a module of its own so that miniredis and its Lua
// interpreter never enter the dependency graph of the quorumlock module.
//
// What miniredis does not do, and what these masters therefore cannot
// show: persistence and restarts that lose data, replication and failover,
// clock drift between masters, a master that freezes (a SIGSTOPped
// process), and INFO commandstats. Tests of those belong against real
// redis-server processes (see redlocktest.TestNode and the chaos suite).
package inmem
