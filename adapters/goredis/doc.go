// Package goredis makes a Redis master reached through a go-redis v9 client
// (github.com/redis/go-redis/v9) a redlock.Node, so that a go-redis user
// keeps their client, with its Cluster, Sentinel, TLS and tracing set-up,
// and takes Redlock locks over it:
//
//	node, err := goredis.New(rdb) // one Node per master
//	...
//	locker, err := redlock.New([]redlock.Node{node1, node2, node3}, redlock.Config{})
//
// # What is one master
//
// A Locker counts one vote per Node, so each client given to New must be
// exactly one master: a plain *redis.Client, a failover client that
// follows the master of a Sentinel master set (redis.NewFailoverClient, or
// redis.NewUniversalClient with MasterName), or a *redis.ClusterClient over
// one Redis Cluster (the whole cluster is one master; a lock's keys share
// the {key} hash tag, so each script runs in one slot). New refuses, before
// anything is sent, a *redis.Ring (ErrRing: it moves keys to another shard
// when one is down, which can hand a held lock to a second holder) and a
// ClusterClient with several seed addresses (ErrSeveralMasters):
// redis.NewUniversalClient makes one from UniversalOptions with several
// Addrs and no MasterName, so three independent masters' addresses would
// become one vote. NewCluster takes a ClusterClient whose several seeds
// are nodes of one cluster.
//
// # What each client can guarantee
//
// Over a *redis.Client (a plain one, or a failover client) the Node has
// every ability a Locker asks for (redlock.Abilities): it reads the
// master's identity (INFO: run id, uptime, persistence) on each new
// connection of the client, and, for the connections the client made
// before New, through the client before its first call, so that it knows
// the master process behind every reply it returns; the restart guard,
// on by default, needs that (identity.go). And it confirms durable grants
// (Config.Durability, durable.go). Over a *redis.ClusterClient it has
// neither: a cluster is many master processes, with no one identity, and a
// probe confirms the writes of its own shard only. redlock.New then
// refuses the Node unless the guard is off (Config.RestartGuard < 0, or
// Config.FsyncAlways), and refuses Config.Durability.
//
// # Safety
//
// A master that fails over to an asynchronously replicated replica (Sentinel,
// a Cluster's replicas, a managed service's failover) can lose a lock that
// was granted just before the failover: the replica may not have received
// the write. For the algorithm that is exactly a master restarted without
// persistence. redlock.Config.Durability makes a grant count only once the
// master's replicas acknowledged it (WAIT) or its AOF holds it on disk
// (WAITAOF); the Node confirms (redlock.Abilities.Confirm, durable.go)
// over a *redis.Client, a failover client included, and refuses a
// confirmation made by another master process than the grant's. A failover
// changes the master's run id as a restart does, so the restart guard
// holds a promoted replica back as it holds a restarted master. What stays
// unsafe: a replica that restarts empty and is promoted, and a failover to
// a replica that did not acknowledge (see the README).
//
// # Versions
//
// It needs go-redis v9.20.0 or later: v9.18 and earlier resend a command
// whose reply was lost (they have no Cmder.NoRetry), and v9.19 waits for
// ever for a master that accepts a connection and never answers its
// HELLO. Avoid v9.20.1 to v9.21.x: they deliver a pub/sub message only
// when the next one arrives (at the next health-check PING, up to 3s
// later), so a waiter is woken by its backoff poll instead of the release.
// On v9.20.0 a lock cycle over three masters measured as fast as on v9.23,
// within noise.
//
// # Transport
//
// Every command goes out at most once: the adapter marks its commands as not
// retryable, so go-redis's retries (MaxRetries, and a ClusterClient's retries
// on another node) never resend a command that may have reached the master.
// MOVED and ASK redirections, which the master answers without running the
// command, still work. A call returns when its context ends; the command
// itself then runs on in go-redis, under the client's ReadTimeout and
// WriteTimeout, which should therefore stay short (the go-redis default of
// 3s is fine). Calls do not wait for each other: a release may reach the
// master, on another pooled connection, before an acquire whose caller
// gave up on it, and the tombstone it leaves makes the acquire refuse
// (package redlock). Connection set-up is bounded by the client's
// DialTimeout, not by the call that triggered it.
//
// A call that needs a new connection also ends when go-redis's dial
// fails, with the dial's error (go-redis itself retries a failed dial five
// times, 100ms apart, before it gives up), and a call made while the
// master refuses connections and none is left in the client's pool fails
// at once with the last one; the command still goes on in go-redis, which
// redials. So a wrong address reads "connection refused" in a
// redlock.QuorumError, not "no answer within the node timeout", and an
// error of a call whose context ended carries the last connection error.
// This needs a hook on the client's dials (New adds it to a *redis.Client;
// a ClusterClient's calls only time out).
//
// Wake on release uses one PubSub connection per Node, opened on the first
// wait and closed with the last one or Node.Close, through a
// pubsub.Registry: it pings the connection every 3s, and redials and
// subscribes again, waking every waiter once, when the connection breaks.
package goredis
