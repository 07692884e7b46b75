package valkeygo

import (
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/valkey-io/valkey-go"
)

// ErrUnsafeOption is the error of Open for client options under which a
// lock command could reach a master twice, or a replica.
var ErrUnsafeOption = nodeutil.ErrUnsafeOption

// Open returns a Node with a valkey-go client of its own, made from opt
// with valkey.NewClient at the Node's first call, and again at later calls
// until one is made: a service whose Nodes come from Open starts with any
// master down, counts that master's votes as failed (with the connection's
// error) until it is back, and takes locks meanwhile with the others. It
// is the way to make a Node unless the client is shared with other code
// (New). A client is made by one call at a time, on a goroutine of its own,
// bounded by opt.Dialer.Timeout and not by the call's context. Close closes
// the client.
//
// Every connection the client dials to the master is read before
// valkey-go uses it (AUTH with opt's credentials, INFO, CONFIG GET
// appendfsync), in the ClientOption.DialCtxFn that Open sets around opt's
// own way of dialing; a Sentinel client's connections to the Sentinels are
// not. So the Node knows the master process behind every reply it returns,
// and its Abilities are EvalPrepared, Subscribe, Identity and Confirm:
// the restart guard and Config.Durability work through it. A Redis Cluster
// has no one master process: Identity says so, and Confirm fails (with
// several addresses in opt, neither is in the Abilities, so redlock.New
// refuses the Node unless the guard is off).
//
// Open refuses (ErrUnsafeOption) a ConnLifetime, under which valkey-go
// resends the commands in flight on a retired connection, and ReplicaOnly
// or SendToReplicas; it sets DisableRetry, since the client is the Node's
// alone. opt must name at least one address. See nodeutil.OpenClientNode.
//
// Addr is opt's address when it names one, "cluster:" and its addresses
// sorted and joined by commas when it names several, and "sentinel:" with
// the master set's name, "@" and the Sentinels' addresses for a Sentinel
// client.
func Open(opt valkey.ClientOption) (*Node, error) {
	return nodeutil.OpenClientNode[Node]("valkeygo", opt, valkey.NewClient, hooks)
}
