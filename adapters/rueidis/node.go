package rueidis

import (
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/redis/rueidis"
)

// Node is one Redis master reached through a rueidis client. It embeds a
// *nodeutil.ClientNode, whose methods are the Node's: Addr, Do, Eval,
// EvalPrepared, Subscribe, Identity, Confirm, Abilities and Close, all
// safe for concurrent use. What it can guarantee depends on the
// constructor (see the package documentation): a Node made by Open has
// every ability a Locker asks for; one made by New cannot tell which
// master process answers, so redlock.New refuses it unless the restart
// guard is off (and refuses Config.Durability with it).
type Node struct {
	*nodeutil.ClientNode[rueidis.Client]
}

// New returns a Node over c, a client that the caller made and keeps: it
// closes c after closing the Node. The Node adds its own pub/sub
// connection, taken from c (Dedicate) on the first Subscribe.
//
// The Node cannot see c's connections, so it cannot tell which master
// process answers a call: its Abilities are EvalPrepared and Subscribe,
// and redlock.New refuses it while the restart guard is on (the default)
// and with Config.Durability; Node.Identity says to use Open. Use Open
// unless c must be shared with other code and the masters' restarts are
// kept from the locks otherwise (appendfsync always with
// Config.FsyncAlways, or a restart delay longer than the longest TTL with
// Config.RestartGuard < 0). New cannot check c's options either: leave
// ClientOption.ConnLifetime at 0 and set DisableRetry (see the package
// documentation).
//
// c may reach one master (a standalone client, or a Sentinel client that
// follows one), or a Redis Cluster (the whole cluster is one master; a
// lock's keys share the {key} hash tag, so each script runs in one slot).
// Addr is the master's address for a standalone client, "cluster:" and
// the cluster nodes known at New joined by commas for a cluster client, and
// the client's type and pointer for any other client (a Sentinel client's
// master moves), e.g. "*rueidis.sentinelClient@0xc000123456": unique within
// a process, as a Locker requires.
func New(c rueidis.Client) *Node {
	return nodeutil.NewClientNode[Node]("rueidis", c, hooks)
}
