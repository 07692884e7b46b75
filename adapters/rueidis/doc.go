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
// New takes a client made by the caller instead, to share it with other
// code.
//
// Each Node is one master of the quorum: a client of one Redis server, a
// Sentinel client, or a cluster client (the whole cluster is one master; a
// lock's keys share the {key} hash tag, so each script runs in one slot).
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
// once more, so a lock script can run twice. Open refuses such options;
// the options of a rueidis.Client cannot be read back, so New cannot
// refuse such a client: leave ConnLifetime at 0. Set DisableRetry to true
// as well (Open does), so that the rest of the client's traffic is not
// resent either.
//
// # Safety
//
// A master that fails over to an asynchronously replicated replica
// (Sentinel, a Cluster's replicas, a managed service's failover) can lose a
// lock that was granted just before the failover: the replica may not have
// received the write. For the algorithm that is exactly a master restarted
// without persistence. Count such a master as one that may forget, and keep
// the quorum's safety by the usual rules: persistence (appendfsync always)
// or a restart delay longer than the longest TTL, and no failover within
// it. Do not route the Node's commands to replicas (ClientOption.SendToReplicas
// or ReplicaOnly).
//
// # Transport
//
// A call returns when its context ends; the command itself then runs on in
// rueidis, bounded by the client's ConnWriteTimeout (10s by default; keep
// it short). A call made while such commands run goes out only after they
// returned: rueidis spreads commands over several connections, and a
// release must not reach the master before the acquire it follows, or the
// acquire leaves the lock there until its TTL. Connection set-up is bounded by the client's Dialer.Timeout,
// not by the call that triggered it. Commands share rueidis's auto-pipelined
// connections; wake on release uses one dedicated connection per Node
// (rueidis's Dedicate), opened on the first Subscribe, closed with the last
// unsubscribe or Node.Close, through a pubsub.Registry, which redials it and
// subscribes again, waking every waiter once, when it breaks.
package rueidis
