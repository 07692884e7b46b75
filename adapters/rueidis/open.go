package rueidis

import (
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/redis/rueidis"
)

// ErrUnsafeOption is the error of Open for client options under which a
// lock command could reach a master twice, or a replica.
var ErrUnsafeOption = nodeutil.ErrUnsafeOption

// Open returns a Node with a rueidis client of its own, made from opt with
// rueidis.NewClient at the Node's first call, and again at later calls
// until one is made. rueidis.NewClient connects, and fails while its
// master is down: a service whose Nodes come from Open starts with any
// master down, counts that master's votes as failed (with the
// connection's error) until it is back, and takes locks meanwhile with the
// others. A client is made by one call at a time, on a goroutine of its
// own, bounded by opt.Dialer.Timeout (5s by default) and not by the call's
// context. Close closes it.
//
// The Node reads its master's identity on every connection the client
// dials, before rueidis uses it, through the ClientOption.DialCtxFn that
// Open sets (it dials as opt says, with opt's DialCtxFn, DialFn or TLS
// configuration, then sends AUTH with opt's credentials and INFO): its
// Abilities are EvalPrepared, Subscribe, Identity (the restart guard) and
// Confirm (Config.Durability). A Sentinel client's connections to the
// Sentinels are not read. Over a Redis Cluster (opt names several
// addresses, or its one address is a cluster node) there is no one master
// process: Identity says so, and Confirm fails; with several addresses
// they are not in the Abilities, so that redlock.New refuses the Node
// unless the guard is off.
//
// Open checks opt, which New cannot do for a client: it refuses
// (ErrUnsafeOption) a ConnLifetime, under which rueidis resends the
// commands in flight on a retired connection, and ReplicaOnly or
// SendToReplicas, which would send lock commands to a replica; and it
// sets DisableRetry, since the client is the Node's alone. opt must name
// at least one address. See nodeutil.OpenClientNode.
//
// Addr is opt's address when it names one, "cluster:" and its addresses
// sorted and joined by commas when it names several (a cluster's seeds),
// and "sentinel:" with the master set's name, "@" and the Sentinels'
// addresses for a Sentinel client.
func Open(opt rueidis.ClientOption) (*Node, error) {
	return nodeutil.OpenClientNode[Node]("rueidis", opt, rueidis.NewClient, hooks)
}
