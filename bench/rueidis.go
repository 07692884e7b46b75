package bench

import (
	"context"
	"net"

	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	redsyncrueidis "github.com/go-redsync/redsync/v4/redis/rueidis"
	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidiscompat"
)

// The rows that compare the libraries over the same rueidis clients.
const (
	OursRueidis    = "quorumlock-rueidis"
	RedsyncRueidis = "redsync-rueidis"
)

// rueidisImpls returns quorumlock over the rueidis adapter beside redsync
// over its rueidis adapter, both on the same client settings.
func rueidisImpls() []Impl {
	rows := Latency | Throughput | Contention
	return []Impl{
		{
			Name: OursRueidis, Scenarios: rows, New: newOursRueidis,
			Config: "redlock.Config{} over adapters/rueidis: one rueidis Client per node made by rueidisnode.Open (auto-pipelined, " +
				"dial timeout 5s, DisableRetry, DisableCache, ConnLifetime 0: the client settings of redsync's row; Open, " +
				"which reads the master's identity on each connection, is what the restart guard needs), wake on release over a dedicated rueidis pub/sub connection",
		},
		{
			Name: RedsyncRueidis, Scenarios: rows, New: newRedsyncRueidis,
			Config: "redsync/v4 with its redis/rueidis adapter (over rueidiscompat) and its defaults (as redsync) " +
				"on rueidis clients with the same settings as quorumlock-rueidis's",
		},
	}
}

// rueidisOption is the client settings of both rueidis rows, for addr:
// as a rueidis user would make them, with retries and the client-side
// cache off.
func rueidisOption(addr string, s Settings) rueidis.ClientOption {
	return rueidis.ClientOption{
		InitAddress: []string{addr}, ForceSingleClient: true,
		Dialer:       net.Dialer{Timeout: s.DialTimeout},
		DisableRetry: true, DisableCache: true,
	}
}

// newRueidisClients makes one rueidis client per address (rueidisOption).
func newRueidisClients(addrs []string, s Settings) ([]rueidis.Client, error) {
	cs := make([]rueidis.Client, 0, len(addrs))
	for _, addr := range addrs {
		c, err := rueidis.NewClient(rueidisOption(addr, s))
		if err != nil {
			closeRueidis(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeRueidis(cs []rueidis.Client) {
	for _, c := range cs {
		c.Close()
	}
}

// rueidisLocker is quorumlock over the rueidis adapter.
type rueidisLocker struct {
	nodes []*rueidisnode.Node
	l     *redlock.Locker
	s     Settings
}

func newOursRueidis(addrs []string, s Settings) (Locker, error) {
	r := &rueidisLocker{s: s}
	nodes := make([]redlock.Node, len(addrs))
	for i, addr := range addrs {
		n, err := rueidisnode.Open(rueidisOption(addr, s))
		if err != nil {
			r.Close()
			return nil, err
		}
		r.nodes = append(r.nodes, n)
		nodes[i] = n
	}
	var err error
	if r.l, err = redlock.New(nodes, redlock.Config{}); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

func (r *rueidisLocker) NewMutex(key string) Mutex {
	return &lockerMutex{l: r.l, key: key, ttl: r.s.TTL}
}

func (r *rueidisLocker) Close() error {
	if r.l != nil {
		r.l.Close(context.Background())
	}
	for _, n := range r.nodes {
		n.Close()
	}
	return nil
}

// redsyncRueidisLocker is redsync over its rueidis adapter.
type redsyncRueidisLocker struct {
	redsyncLocker
	clients []rueidis.Client
}

func newRedsyncRueidis(addrs []string, s Settings) (Locker, error) {
	cs, err := newRueidisClients(addrs, s)
	if err != nil {
		return nil, err
	}
	l := &redsyncRueidisLocker{clients: cs}
	pools := make([]redsyncredis.Pool, len(cs))
	for i, c := range cs {
		pools[i] = redsyncrueidis.NewPool(rueidiscompat.NewAdapter(c))
	}
	l.rs = redsync.New(pools...)
	l.opts = []redsync.Option{redsync.WithExpiry(s.TTL)}
	return l, nil
}

func (l *redsyncRueidisLocker) NewMutex(key string) Mutex {
	return &redsyncMutex{l: &l.redsyncLocker, key: key, m: l.rs.NewMutex(key, l.opts...)}
}

func (l *redsyncRueidisLocker) Close() error {
	closeRueidis(l.clients)
	return nil
}
