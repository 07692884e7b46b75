package valkeygo

import (
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/valkey-io/valkey-go"
)

// Node is one master reached through a valkey-go client. It embeds a
// *nodeutil.ClientNode, as the rueidis adapter's Node does (valkey-go is a
// fork of rueidis), whose methods are the Node's: Addr, Do, Eval,
// EvalPrepared, Subscribe, Identity, Confirm, Abilities and Close, all
// safe for concurrent use. A Node made by Open has every ability a Locker
// asks for; one made by New cannot tell which master process answers, so
// redlock.New refuses it unless the restart guard is off (and refuses
// Config.Durability with it). See the package documentation.
type Node struct {
	*nodeutil.ClientNode[valkey.Client]
}

// New returns a Node over c, a client that the caller made and keeps: it
// closes c after closing the Node. The Node adds its own pub/sub
// connection, taken from c (Dedicate) on the first Subscribe.
//
// The Node cannot see c's connections, so it cannot tell which master
// process answers a call: its Abilities are EvalPrepared and Subscribe
// only. redlock.New refuses it while the restart guard is on (the
// default), and with Config.Durability; Node.Identity says to use Open.
// New suits a client shared with other code, over masters whose restarts
// are kept from the locks otherwise (appendfsync always, declared with
// Config.FsyncAlways; or a restart delay longer than the longest TTL, with
// Config.RestartGuard < 0). Its options cannot be read back, so New cannot
// check them: ConnLifetime must stay 0 and DisableRetry should be true.
//
// c may reach one master (a standalone client, or a Sentinel client that
// follows one), or a cluster (the whole cluster is one master). Addr is
// the master's address for a standalone client, "cluster:" and the cluster
// nodes known at New joined by commas for a cluster client, and the
// client's type and pointer for any other client (a Sentinel client's
// master moves): unique within a process, as a Locker requires.
func New(c valkey.Client) *Node {
	return nodeutil.NewClientNode[Node]("valkeygo", c, hooks)
}
