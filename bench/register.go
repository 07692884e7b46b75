package bench

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Register has every master at addrs registered by quorumlock's restart
// guard, for ttl, as the masters of a deployment in use are: a lock taken
// and released by a Locker over all of them. Without it, the masters a run
// first uses with fewer nodes (N=1) would make the others, which no client
// met yet, look like masters that lost their records: held back for the
// TTL after their start (redlock/guard.go), a wait that is no part of
// what the runs measure.
func Register(ctx context.Context, addrs []string, ttl time.Duration) error {
	nodes := make([]redlock.Node, len(addrs))
	for i, a := range addrs {
		n := pool.New(pool.Config{Addr: a})
		defer n.Close()
		nodes[i] = n
	}
	l, err := redlock.New(nodes, redlock.Config{Quorum: len(nodes)})
	if err != nil {
		return err
	}
	defer l.Close(context.WithoutCancel(ctx))
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lk, err := l.Lock(ctx, "bench:register", ttl)
	if err != nil {
		return fmt.Errorf("bench: registering the masters: %w", err)
	}
	return lk.Unlock(ctx)
}
