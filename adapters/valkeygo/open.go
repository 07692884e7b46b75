package valkeygo

import (
	"fmt"
	"slices"

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
// Open refuses (ErrUnsafeOption) a ConnLifetime, under which valkey-go
// resends the commands in flight on a retired connection, and ReplicaOnly
// or SendToReplicas; it sets DisableRetry, since the client is the Node's
// alone. opt must name at least one address.
//
// Addr is opt's address when it names one, "cluster:" and its addresses
// sorted and joined by commas when it names several, and "sentinel:" with
// the master set's name, "@" and the Sentinels' addresses for a Sentinel
// client.
func Open(opt valkey.ClientOption) (*Node, error) {
	o := nodeutil.ClientOptions{
		InitAddress:  opt.InitAddress,
		MasterSet:    opt.Sentinel.MasterSet,
		ConnLifetime: opt.ConnLifetime,
		ToReplicas:   opt.ReplicaOnly || opt.SendToReplicas != nil,
	}
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("valkeygo: Open: %w", err)
	}
	opt.InitAddress = slices.Clone(opt.InitAddress) // NewClient may shuffle it
	opt.DisableRetry = true
	own := nodeutil.NewLazy(func() (valkey.Client, error) { return valkey.NewClient(opt) })
	return newNode(o.Name(), own.Get, own), nil
}
