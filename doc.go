// Package quorumlock is the root of the module: it records which version
// the module is, and which version each module of the repository is
// (adapters, redlocktest/inmem, the chaos harness, the benchmarks), from
// the repository's versions file.
//
// The library is elsewhere: package redlock (the locks), pool (a master
// over redigo), pubsub (wake on release for any client), nodeutil (what a
// Node over another client library shares), redlocktest (a conformance
// suite and test masters), and the adapters for go-redis, rueidis,
// valkey-go and OpenTelemetry, each a module of its own.
package quorumlock
