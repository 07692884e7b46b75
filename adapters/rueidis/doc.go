// Package rueidis makes a Redis master reached through a rueidis client
// (github.com/redis/rueidis) a redlock.Node, so that a rueidis user keeps
// their client, with its Cluster, Sentinel and TLS set-up, and takes
// Redlock locks over it.
//
// Its name is the upstream package's, so import one of them under another
// name. Open makes a Node with a client of its own, made at its first call,
// so that a service starts while a master is down (rueidis.NewClient fails
// when it cannot connect):
//
//	import (
//		rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
//		"github.com/redis/rueidis"
//	)
//
//	var nodes []redlock.Node
//	for _, addr := range []string{"redis-a:6379", "redis-b:6379", "redis-c:6379"} {
//		node, err := rueidisnode.Open(rueidis.ClientOption{InitAddress: []string{addr}})
//		if err != nil {
//			return err // an option under which a lock command could be sent twice
//		}
//		nodes = append(nodes, node)
//	}
//	locker, err := redlock.New(nodes, redlock.Config{})
//
// Each Node is one master of the quorum: a client of one Redis server, a
// Sentinel client, or a cluster client (the whole cluster is one master; a
// lock's keys share the {key} hash tag, so each script runs in one slot).
//
// The Node is a nodeutil.ClientNode, which the valkeygo adapter's Node is
// made of too: the package holds the constructors and the pub/sub hooks,
// nodeutil the rest.
//
// # What each constructor can guarantee
//
// Open (the way to make a Node) reads the master's identity (INFO: run id,
// uptime, persistence) on every connection its client dials, before
// rueidis uses it: the Node knows the master process behind every reply it
// returns, which the restart guard (on by default) needs, and it confirms
// durable grants (Config.Durability) on a dedicated connection, failing a
// confirmation made by another master process than the grant's. Its
// Abilities are EvalPrepared, Subscribe, Identity and Confirm: all a Locker
// asks for. It checks the options (below). A Sentinel client's connections
// to the Sentinels are not read. A Redis Cluster is many master processes:
// over one, Identity says so and Confirm fails, so the guard refuses its
// grants (turn it off with Config.RestartGuard < 0); over several seed
// addresses neither is among the Abilities, and redlock.New refuses the
// Node unless the guard is off.
//
// New takes a client that the caller made and shares: the Node cannot see
// its connections, nor read its options. Its Abilities are EvalPrepared
// and Subscribe: redlock.New refuses it while the restart guard is on (the
// default) and with Config.Durability, and Node.Identity says to use Open.
// Use New only over masters whose restarts lose no lock
// (appendfsync always, declared with Config.FsyncAlways) or are kept down
// for the longest TTL (Config.RestartGuard < 0).
//
// # Client options: ConnLifetime must stay 0
//
// A lock command must reach a master at most once: a lost reply is a failed
// vote, never a reason to send it again. The Node builds its commands so
// that rueidis never retries them (rueidis retries only commands marked
// read-only, whatever ClientOption.DisableRetry says). One resend cannot be
// switched off per command: with ClientOption.ConnLifetime set, rueidis
// retires a connection when its lifetime ends, and if the master has not
// answered within a second it sends the commands that were in flight on it
// once more, so a lock script can run twice. Open refuses such options,
// and ReplicaOnly and SendToReplicas, which would send lock commands to a
// replica; the options of a rueidis.Client cannot be read back, so New
// cannot refuse such a client: leave ConnLifetime at 0. Set DisableRetry
// to true as well (Open does), so that the rest of the client's traffic is
// not resent either.
//
// # Safety
//
// A master that fails over to an asynchronously replicated replica
// (Sentinel, a Cluster's replicas, a managed service's failover) can lose a
// lock that was granted just before the failover: the replica may not have
// received the write. For the algorithm that is exactly a master restarted
// without persistence. Through a Node made by Open, Config.Durability makes
// a grant count only once the master's AOF holds it on disk (Local:
// WAITAOF, Redis 7.2+ or Valkey) or Replicas replicas acknowledged it; and
// a failover changes the master's run id as a restart does, so the restart
// guard holds a promoted replica back. What stays unsafe: a replica that
// restarts empty and is promoted, and a failover to a replica that did not
// acknowledge.
//
// # Transport
//
// A call returns when its context ends; the command itself then runs on in
// rueidis, bounded by the client's ConnWriteTimeout (10s by default; keep
// it short). The Node's commands do not wait for each other, and rueidis
// spreads them over several connections, so a release may reach the
// master before an acquire whose caller gave up on it: the tombstone the
// release leaves makes that acquire refuse (package redlock). Connection
// set-up is bounded by the client's Dialer.Timeout, not by the call that
// triggered it. Commands share rueidis's auto-pipelined connections; wake
// on release uses one dedicated connection per Node (rueidis's Dedicate),
// opened on the first Subscribe, closed with the last unsubscribe or
// Node.Close, through a pubsub.Registry, which redials it and subscribes
// again, waking every waiter once, when it breaks; a durable confirmation
// borrows a dedicated connection for its length (Dedicated).
package rueidis
