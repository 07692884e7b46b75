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
// Each Node is one master of the quorum: a client of one server, a
// Sentinel client, or a cluster client (the whole cluster is one master; a
// lock's keys share the {key} hash tag, so each script runs in one slot).
// The Node is a nodeutil.ClientNode, as the rueidis adapter's is: this
// package names valkey-go's types (the constructors, the pub/sub hooks),
// nodeutil does the rest, once for both.
//
// # What Open and New can guarantee
//
// A Node made by Open knows which master process answers each of its
// calls: every connection its client dials to the master is read (AUTH
// with the options' credentials, INFO, CONFIG GET appendfsync) before
// valkey-go uses it. So the restart guard (redlock.Config.RestartGuard, on
// by default) and durable grants (Config.Durability: WAITAOF on Valkey's
// AOF, or WAIT for replicas, on a dedicated connection, refused when
// another master process confirms than the grant's) work through it: its
// Abilities are EvalPrepared, Subscribe, Identity and Confirm. Over a
// cluster, which is many master processes, Identity says so and Confirm
// fails (with several seed addresses, neither is among the Abilities).
//
// A Node made by New, over a client the caller made, sees none of the
// client's connections: its Abilities are EvalPrepared and Subscribe.
// redlock.New refuses it under the default Config (the restart guard on)
// and with Durability; Node.Identity says to make it with Open. It suits
// masters whose restarts lose no lock (appendfsync always, declared with
// Config.FsyncAlways) or are kept down for the longest TTL
// (Config.RestartGuard < 0).
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
// lock that was granted just before the failover: for the algorithm that
// is a master restarted without persistence. Through a Node made by Open
// the restart guard holds a promoted replica back as a restarted master
// (the run id changes), and Config.Durability makes a grant count only
// once it is on the AOF or on the replicas. Do not route the Node's
// commands to replicas (ClientOption.SendToReplicas or ReplicaOnly; Open
// refuses them).
//
// # Transport
//
// The Node's calls go through a nodeutil.Exec, which keeps the transport
// rules: each command is sent once, a script by its hash and by its source
// only after NOSCRIPT, also when its caller gave up meanwhile. Calls do
// not wait for each other, and valkey-go spreads commands over several
// connections: a release that reaches the master before an acquire whose
// caller gave up on it leaves a tombstone that makes the acquire refuse
// (package redlock). A call returns when its context ends; the command
// itself then runs on in valkey-go, bounded by the client's
// ConnWriteTimeout (keep it short). Connection set-up is bounded by the
// client's Dialer.Timeout, not by the call that triggered it. Commands
// share valkey-go's auto-pipelined connections; wake on release uses one
// dedicated connection per Node (Dedicate), opened on the first Subscribe,
// closed with the last unsubscribe or Node.Close, through a
// pubsub.Registry, which redials it and subscribes again, waking every
// waiter once, when it breaks.
package valkeygo
