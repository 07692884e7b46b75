package goredis

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// What one Node may be. A Locker counts one vote per Node, so a Node must
// be exactly one master, the thing that forgets a lock all at once:
//
//   - a *redis.Client: one server (redis.NewClient), or the current master
//     of a Sentinel master set (redis.NewFailoverClient);
//   - a *redis.ClusterClient over one Redis Cluster: the whole cluster is
//     one master, since a lock's keys share one hash slot. New takes one
//     whose options name one seed address or describe the cluster
//     themselves (ClusterSlots, as redis.NewFailoverClusterClient's do);
//     NewCluster takes any, on the caller's word that its seeds are nodes
//     of one cluster;
//   - any other redis.UniversalClient, on the caller's word.
//
// Refused:
//
//   - a *redis.Ring: it spreads keys over several masters and moves a key
//     to another shard while its shard is down, so a second holder can be
//     granted a lock the first shard still holds;
//   - by New, a *redis.ClusterClient with several seed addresses:
//     redis.NewUniversalClient makes one from UniversalOptions with several
//     Addrs and no MasterName, which a caller who meant three independent
//     masters gets from three addresses: they would count as one vote (and
//     a ClusterClient over servers that are not a cluster fails every
//     call).

// ErrRing is the error of New and NewCluster for a *redis.Ring: a ring
// moves a key to another shard while its shard is down, so a second
// holder could be granted a lock that the first shard still holds.
var ErrRing = errors.New("goredis: a *redis.Ring cannot be a lock master (it moves keys between shards)")

// ErrSeveralMasters is the error of New for a client that may merge
// several masters into one Node: a *redis.ClusterClient with several seed
// addresses, as redis.NewUniversalClient makes from UniversalOptions with
// several Addrs and no MasterName. Give New one client per master, or
// NewCluster a ClusterClient whose seeds are nodes of one Redis Cluster.
var ErrSeveralMasters = errors.New("goredis: the client may merge several masters into one Node")

// checkMaster returns an error unless c is one master (see above);
// cluster is the caller's word that a ClusterClient is one cluster.
func checkMaster(c redis.UniversalClient, cluster bool) error {
	switch c := c.(type) {
	case nil:
		return errors.New("goredis: nil client")
	case *redis.Ring:
		return ErrRing
	case *redis.ClusterClient:
		opt := c.Options()
		if !cluster && opt.ClusterSlots == nil && len(opt.Addrs) > 1 {
			return fmt.Errorf("%w: a *redis.ClusterClient with the seed addresses %s (redis.NewUniversalClient makes one from several Addrs without MasterName): give New one client per master, or NewCluster if they are nodes of one Redis Cluster",
				ErrSeveralMasters, strings.Join(opt.Addrs, ", "))
		}
	}
	return nil
}
