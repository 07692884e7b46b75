// Package valkeygo makes a master reached through a valkey-go client
// (github.com/valkey-io/valkey-go, the Valkey project's client, a fork of
// rueidis) a redlock.Node, so that a valkey-go user keeps their client,
// with its Cluster, Sentinel and TLS set-up, and takes Redlock locks over
// it. The master may run Valkey or Redis.
//
// Open makes a Node with a client of its own, made at its first call, so
// that a service starts while a master is down (valkey.NewClient fails when
// it cannot connect):
//
//	import (
//		"github.com/quorumlock/quorumlock/adapters/valkeygo"
//		"github.com/valkey-io/valkey-go"
//	)
//
//	var nodes []redlock.Node
//	for _, addr := range []string{"valkey-a:6379", "valkey-b:6379", "valkey-c:6379"} {
//		node, err := valkeygo.Open(valkey.ClientOption{InitAddress: []string{addr}})
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
// Each Node is one master of the quorum: a client of one server, a
// Sentinel client, or a cluster client (the whole cluster is one master; a
// lock's keys share the {key} hash tag, so each script runs in one slot).
//
// # Client options: ConnLifetime must stay 0
//
// A lock command must reach a master at most once: a lost reply is a failed
// vote, never a reason to send it again. The Node builds its commands so
// that valkey-go never retries them (it retries only commands marked
// read-only, whatever ClientOption.DisableRetry says). One resend cannot be
// switched off per command: with ClientOption.ConnLifetime set, valkey-go
// retires a connection when its lifetime ends, and if the master has not
// answered within a second it sends the commands that were in flight on it
// once more, so a lock script can run twice. Open refuses such options;
// the options of a valkey.Client cannot be read back, so New cannot refuse
// such a client: leave ConnLifetime at 0. Set DisableRetry to true as well
// (Open does), so that the rest of the client's traffic is not resent
// either.
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
// or ReplicaOnly; Open refuses them).
//
// # Transport
//
// The Node's calls go through a nodeutil.Exec, which keeps the transport
// rules: each command is sent once, a script by its hash and by its source
// only after NOSCRIPT, and a call made while commands whose callers gave up
// still run goes out only after they returned (valkey-go spreads commands
// over several connections, and a release must not reach the master before
// the acquire it follows). A call returns when its context ends; the
// command itself then runs on in valkey-go, bounded by the client's
// ConnWriteTimeout (keep it short). Connection set-up is bounded by the
// client's Dialer.Timeout, not by the call that triggered it. Commands share
// valkey-go's auto-pipelined connections; wake on release uses one dedicated
// connection per Node (Dedicate), opened on the first Subscribe, closed
// with the last unsubscribe or Node.Close, through a pubsub.Registry, which
// redials it and subscribes again, waking every waiter once, when it
// breaks.
package valkeygo
