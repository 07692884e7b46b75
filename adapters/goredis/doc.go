// Package goredis makes a Redis master reached through a go-redis v9 client
// (github.com/redis/go-redis/v9) a redlock.Node, so that a go-redis user
// keeps their client, with its Cluster, Sentinel, TLS and tracing set-up,
// and takes Redlock locks over it:
//
//	nodes := []redlock.Node{goredis.New(rdb1), goredis.New(rdb2), goredis.New(rdb3)}
//	locker, err := redlock.New(nodes, redlock.Config{})
//
// Each client given to New is one master of the quorum: a plain *redis.Client,
// a *redis.ClusterClient (the whole cluster is one master; a lock's keys
// share the {key} hash tag, so each script runs in one slot), or a failover
// (Sentinel) client. A *redis.Ring is refused: it moves keys to another
// shard when one is down, which can hand a held lock to a second holder.
//
// # Safety
//
// A master that fails over to an asynchronously replicated replica (Sentinel,
// a Cluster's replicas, a managed service's failover) can lose a lock that
// was granted just before the failover: the replica may not have received
// the write. For the algorithm that is exactly a master restarted without
// persistence. Count such a master as one that may forget, and keep the
// quorum's safety by the usual rules: persistence (appendfsync always) or
// a restart delay longer than the longest TTL, and no failover within it.
//
// # Transport
//
// It needs go-redis v9.23.0 or later: earlier v9 releases deliver a RESP3
// pub/sub reply late (at the next health-check PING, 3s) when it arrives
// while the PubSub's reader waits, which delays wake on release.
//
// Every command goes out at most once: the adapter marks its commands as not
// retryable, so go-redis's retries (MaxRetries, and a ClusterClient's retries
// on another node) never resend a command that may have reached the master.
// MOVED and ASK redirections, which the master answers without running the
// command, still work. A call returns when its context ends; the command
// itself then runs on in go-redis, under the client's ReadTimeout and
// WriteTimeout, which should therefore stay short (the go-redis default of
// 3s is fine). A call made while such commands run goes out only after they
// returned, so that a release never reaches the master, on another pooled
// connection, before the acquire it follows. Connection set-up is bounded by the client's DialTimeout, not
// by the call that triggered it.
package goredis
