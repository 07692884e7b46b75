package bench

import (
	"context"
	"errors"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/quorumlock/quorumlock/adapters/goredis"
	"github.com/quorumlock/quorumlock/redlock"
	goredisv9 "github.com/redis/go-redis/v9"
)

// The rows that compare the libraries over the same go-redis clients.
const (
	OursGoredis    = "quorumlock-goredis"
	RedsyncGoredis = "redsync-goredis"
)

// clientImpls returns quorumlock over the go-redis adapter beside redsync
// over its go-redis adapter, both on the same client settings.
func clientImpls() []Impl {
	rows := Latency | Throughput | Contention
	return []Impl{
		{
			Name: OursGoredis, Scenarios: rows, New: newOursGoredis,
			Config: "redlock.Config{} over adapters/goredis: one go-redis/v9 Client per node " +
				"(PoolSize 64, dial timeout 5s, MaxRetries -1, ContextTimeoutEnabled), wake on release over go-redis pub/sub",
		},
		{
			Name: RedsyncGoredis, Scenarios: rows, New: newRedsyncGoredis,
			Config: "redsync/v4 with its redis/goredis/v9 adapter and its defaults (as redsync) on the same go-redis clients as quorumlock-goredis",
		},
	}
}

// newGoredisClients makes one go-redis client per address, as a go-redis
// user would, with retries off and the context's deadline honoured.
func newGoredisClients(addrs []string, s Settings) []*goredisv9.Client {
	cs := make([]*goredisv9.Client, len(addrs))
	for i, addr := range addrs {
		cs[i] = goredisv9.NewClient(&goredisv9.Options{
			Addr: addr, PoolSize: s.PoolSize, DialTimeout: s.DialTimeout,
			MaxRetries: -1, ContextTimeoutEnabled: true,
		})
	}
	return cs
}

func closeGoredis(cs []*goredisv9.Client) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// goredisLocker is quorumlock over the go-redis adapter.
type goredisLocker struct {
	clients []*goredisv9.Client
	nodes   []*goredis.Node
	l       *redlock.Locker
	ttl     time.Duration
}

func newOursGoredis(addrs []string, s Settings) (Locker, error) {
	g := &goredisLocker{clients: newGoredisClients(addrs, s), ttl: s.TTL}
	nodes := make([]redlock.Node, len(addrs))
	for i, c := range g.clients {
		n, err := goredis.New(c)
		if err != nil {
			g.Close()
			return nil, err
		}
		g.nodes = append(g.nodes, n)
		nodes[i] = n
	}
	l, err := redlock.New(nodes, redlock.Config{})
	if err != nil {
		g.Close()
		return nil, err
	}
	g.l = l
	return g, nil
}

func (g *goredisLocker) NewMutex(key string) Mutex { return &lockerMutex{l: g.l, key: key, ttl: g.ttl} }

func (g *goredisLocker) Close() error {
	for _, n := range g.nodes {
		n.Close()
	}
	return closeGoredis(g.clients)
}

// lockerMutex is one key of a redlock.Locker.
type lockerMutex struct {
	l    *redlock.Locker
	key  string
	ttl  time.Duration
	held *redlock.Lock
}

func (m *lockerMutex) Lock(ctx context.Context) error {
	lk, err := m.l.Lock(ctx, m.key, m.ttl)
	if err != nil {
		return err
	}
	m.held = lk
	return nil
}

func (m *lockerMutex) Unlock(ctx context.Context) error {
	lk := m.held
	m.held = nil
	return lk.Unlock(ctx)
}

// redsyncGoredisLocker is redsync over its go-redis adapter.
type redsyncGoredisLocker struct {
	redsyncLocker
	clients []*goredisv9.Client
}

func newRedsyncGoredis(addrs []string, s Settings) (Locker, error) {
	l := &redsyncGoredisLocker{clients: newGoredisClients(addrs, s)}
	pools := make([]redsyncredis.Pool, len(l.clients))
	for i, c := range l.clients {
		pools[i] = redsyncgoredis.NewPool(c)
	}
	l.rs = redsync.New(pools...)
	l.opts = []redsync.Option{redsync.WithExpiry(s.TTL)}
	return l, nil
}

func (l *redsyncGoredisLocker) NewMutex(key string) Mutex {
	return &redsyncMutex{l: &l.redsyncLocker, key: key, m: l.rs.NewMutex(key, l.opts...)}
}

func (l *redsyncGoredisLocker) Close() error { return closeGoredis(l.clients) }
