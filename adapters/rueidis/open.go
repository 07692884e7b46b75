package rueidis

import (
	"fmt"
	"slices"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/redis/rueidis"
)

// ErrUnsafeOption is the error of Open for client options under which a
// lock command could reach a master twice, or a replica.
var ErrUnsafeOption = nodeutil.ErrUnsafeOption

// Open returns a Node with a rueidis client of its own, made from opt with
// rueidis.NewClient at the Node's first call, and again at later calls
// until one is made. rueidis.NewClient connects, and fails while its
// master is down: a service that makes its clients itself cannot start
// then, while one whose Nodes come from Open starts with any master down,
// counts that master's votes as failed (with the connection's error)
// until it is back, and takes locks meanwhile with the others. It is the
// way to make a Node unless the client is shared with other code (New).
//
// A client is made by one call at a time, on a goroutine of its own,
// bounded by opt.Dialer.Timeout (5s by default) and not by the call's
// context; calls that come meanwhile wait for it or for their context.
// Close closes the client.
//
// Open checks opt, which New cannot do for a client: it refuses
// (ErrUnsafeOption) a ConnLifetime, under which rueidis resends the
// commands in flight on a retired connection, and ReplicaOnly or
// SendToReplicas, which would send lock commands to a replica; and it
// sets DisableRetry, since the client is the Node's alone. opt must name
// at least one address.
//
// Addr is opt's address when it names one, "cluster:" and its addresses
// sorted and joined by commas when it names several (a cluster's seeds),
// and "sentinel:" with the master set's name, "@" and the Sentinels'
// addresses for a Sentinel client.
func Open(opt rueidis.ClientOption) (*Node, error) {
	o := nodeutil.ClientOptions{
		InitAddress:  opt.InitAddress,
		MasterSet:    opt.Sentinel.MasterSet,
		ConnLifetime: opt.ConnLifetime,
		ToReplicas:   opt.ReplicaOnly || opt.SendToReplicas != nil,
	}
	if err := o.Check(); err != nil {
		return nil, fmt.Errorf("rueidis: Open: %w", err)
	}
	opt.InitAddress = slices.Clone(opt.InitAddress) // NewClient may shuffle it
	opt.DisableRetry = true
	own := nodeutil.NewLazy(func() (rueidis.Client, error) { return rueidis.NewClient(opt) })
	return newNode(o.Name(), own.Get, own), nil
}
