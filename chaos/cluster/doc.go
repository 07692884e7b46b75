// Package cluster runs N independent Redis masters for the chaos harness and
// injects node-level faults into them.
//
// A Cluster is a set of Nodes. Three backends implement it:
//
//   - Local starts redis-server processes on free loopback ports
//     (internal/redisproc); it is the default and needs only redis-server on
//     PATH.
//   - Docker starts one container per node through dockertest, from the
//     public redis:7 image by default or from any image named by
//     Config.Image or the QUORUMLOCK_REDIS_IMAGE environment variable (see
//     package redisimage for an image built from the host's binary).
//   - Compose drives the five masters of the repository's docker-compose.yml,
//     started beforehand with docker compose up.
//
// Every node can be killed, started, restarted with or without a delay,
// paused and resumed. Whether a restart keeps the data depends on the node's
// persistence (AOF with appendfsync always, or none), fixed when the cluster
// starts; RestartKept restarts a node as a persistent one restarts (its
// data back, its connections and scripts gone) whatever its persistence,
// where the backend can. ClockJump emulates a jump of a node's clock by
// shifting the expiry of every key on it; ScriptFlush empties its script
// cache. The local backend runs redis-server, or valkey-server (or another
// compatible server) named by Config.Server or QUORUMLOCK_SERVER.
//
// On the local backend only: PersistenceEverysec nodes can lose power
// (Sync, PowerLoss: the AOF cut back to its last fsync, as a crash of the
// machine does; powerloss.go), and StartReplicated gives every master a
// replica and fails one over with a real Sentinel, its replica's link
// lagging (sentinel.go). WaitAOFServer finds a server with WAITAOF.
package cluster
