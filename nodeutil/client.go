package nodeutil

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// What rueidis and valkey-go clients share, for the Nodes over them: their
// options name the master, and two of them would make a lock command reach
// a master twice or reach a replica.

// ErrUnsafeOption is the error of ClientOptions.Check for options under
// which a lock command could reach a master twice, or a replica.
var ErrUnsafeOption = errors.New("nodeutil: client option unsafe for a lock master")

// ClientOptions are the options of a rueidis or valkey-go client that a
// Node checks and names itself after.
type ClientOptions struct {
	// InitAddress is ClientOption.InitAddress: one server, a cluster's
	// seeds, or a Sentinel's addresses.
	InitAddress []string
	// MasterSet is ClientOption.Sentinel.MasterSet.
	MasterSet string
	// ConnLifetime is ClientOption.ConnLifetime: when it retires a
	// connection whose master has not answered within a second, the client
	// sends the commands in flight on it again.
	ConnLifetime time.Duration
	// ToReplicas is ClientOption.ReplicaOnly, or a SendToReplicas set.
	ToReplicas bool
}

// Check refuses options without an address, and with a ConnLifetime or
// ToReplicas (ErrUnsafeOption).
func (o ClientOptions) Check() error {
	switch {
	case len(o.InitAddress) == 0:
		return errors.New("nodeutil: no address in ClientOption.InitAddress")
	case o.ConnLifetime != 0:
		return fmt.Errorf("%w: ConnLifetime %v (the client resends the commands in flight on a connection it retires)", ErrUnsafeOption, o.ConnLifetime)
	case o.ToReplicas:
		return fmt.Errorf("%w: ReplicaOnly or SendToReplicas (lock commands must reach the master)", ErrUnsafeOption)
	}
	return nil
}

// Name names the master the options reach: the address when there is one,
// "cluster:" and the addresses sorted and joined by commas when there are
// several (a cluster's seeds), and "sentinel:" with the master set's name,
// "@" and the Sentinels' addresses for a Sentinel client.
func (o ClientOptions) Name() string {
	addrs := slices.Clone(o.InitAddress)
	switch {
	case o.MasterSet != "":
		return "sentinel:" + o.MasterSet + "@" + strings.Join(addrs, ",")
	case len(addrs) == 1:
		return addrs[0]
	}
	slices.Sort(addrs)
	return "cluster:" + strings.Join(addrs, ",")
}

// ClientName names the master a client reaches, from its mode ("standalone"
// or "cluster", as rueidis's and valkey-go's Client.Mode say) and the
// addresses of its nodes: the address of a standalone client's one node,
// "cluster:" and the nodes sorted and joined by commas for a cluster, and
// the client's type and pointer otherwise (a Sentinel client's master
// moves): unique within a process, as a Locker requires.
func ClientName(c any, mode string, nodes []string) string {
	switch {
	case mode == "standalone" && len(nodes) == 1:
		return nodes[0]
	case mode == "cluster" && len(nodes) > 0:
		nodes = slices.Sorted(slices.Values(nodes))
		return "cluster:" + strings.Join(nodes, ",")
	}
	return fmt.Sprintf("%T@%p", c, c)
}
