package workload

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/valkey-io/valkey-go"

	goredisnode "github.com/quorumlock/quorumlock/adapters/goredis"
	rueidisnode "github.com/quorumlock/quorumlock/adapters/rueidis"
	"github.com/quorumlock/quorumlock/adapters/valkeygo"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

// Transport is how a client reaches the masters: every entry point of the
// library through which an application can, each through the client's own
// fault proxies.
type Transport string

// The transports.
const (
	// Pipelined is a *pool.Node in its default mode: one auto-pipelined
	// connection per master.
	Pipelined Transport = "pipelined"
	// Pooled is a *pool.Node with pool.Config.Pooled: a connection per
	// concurrent call.
	Pooled Transport = "pooled"
	// GoRedis is the go-redis adapter (adapters/goredis) over a go-redis
	// client per master, its ReadTimeout drawn from the seed: go-redis's
	// default of 3s, or a short one (goRedisShortRead), under which the
	// client gives a connection up while its command may still arrive.
	GoRedis Transport = "goredis"
	// Rueidis is the rueidis adapter (adapters/rueidis) over a rueidis
	// client per master made by its Open, its ConnWriteTimeout drawn from
	// the seed: rueidis's default (10s), or a short one
	// (rueidisShortWrite).
	Rueidis Transport = "rueidis"
	// ValkeyGo is the valkey-go adapter (adapters/valkeygo) over a
	// valkey-go client per master made by its Open, with the same options
	// as Rueidis.
	ValkeyGo Transport = "valkeygo"
)

// Command names the redlock command as an entry point (Driven, the
// restart matrix): not a transport of the Env's clients, which the command
// does not use (it makes its own pool.Nodes, in a process per run).
const Command Transport = "command"

// Transports lists every transport.
var Transports = []Transport{Pipelined, Pooled, GoRedis, Rueidis, ValkeyGo}

// The short timeouts a seed may give the adapters' clients: past the node
// timeout, so that calls give up first, and short enough that a late
// reply (netfault's delays) finds its connection gone.
const (
	goRedisShortRead  = 3 * NodeTimeout
	rueidisShortWrite = time.Second
)

// ParseTransport returns the transport called name, or an error naming
// the transports.
func ParseTransport(name string) (Transport, error) {
	for _, t := range Transports {
		if string(t) == name {
			return t, nil
		}
	}
	return "", fmt.Errorf("workload: no transport %q (want one of %v)", name, Transports)
}

// MixTransports returns the transports of a run's clients: three of
// every four are Pipelined, the library's default (the probes and the echo
// checks meet the pipelined connection's own defects through them as
// often as through four), and every fourth (clients 3, 7, ...) reaches the
// masters through one of the others, in turn from the k-th: with k = 0
// the Pooled mode, then the go-redis adapter, then the rueidis one. A
// suite gives its scenarios consecutive k, so that each of the other
// transports has clients in a third of them.
func MixTransports(k int) func(client int) Transport {
	others := slices.DeleteFunc(slices.Clone(Transports), func(t Transport) bool { return t == Pipelined })
	return func(client int) Transport {
		if client%4 != 3 {
			return Pipelined
		}
		return others[(k+client/4)%len(others)]
	}
}

// AllOver returns a transport choice that gives every client t.
func AllOver(t Transport) func(client int) Transport {
	return func(int) Transport { return t }
}

// masterNode is one client's node of one master, as the harness holds
// it: the Node its Locker uses (before EnvConfig.Wrap) and how to close
// it.
type masterNode struct {
	node  redlock.Node
	close func() error
}

// dialer makes the nodes of one client: its transport, and the options
// its seed drew.
type dialer struct {
	transport Transport
	username  string // "" for the default user
	password  string
	// goRedisRead is the go-redis client's ReadTimeout (0: go-redis's
	// default); rueidisWrite the rueidis client's ConnWriteTimeout.
	goRedisRead, rueidisWrite time.Duration
}

// optionsRNG is the source of the transports' options of a run with seed.
func optionsRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0xd1a1)) }

// newDialer returns the dialer of a client of transport t, its options
// drawn from rng.
func newDialer(t Transport, password string, rng *rand.Rand) *dialer {
	d := &dialer{transport: t, password: password}
	short := rng.IntN(2) == 0
	switch {
	case t == GoRedis && short:
		d.goRedisRead = goRedisShortRead
	case (t == Rueidis || t == ValkeyGo) && short:
		d.rueidisWrite = rueidisShortWrite
	}
	return d
}

// String describes the transport and its options, e.g. "goredis
// (ReadTimeout 300ms)".
func (d *dialer) String() string {
	switch {
	case d.goRedisRead > 0:
		return fmt.Sprintf("%s (ReadTimeout %v)", d.transport, d.goRedisRead)
	case d.rueidisWrite > 0:
		return fmt.Sprintf("%s (ConnWriteTimeout %v)", d.transport, d.rueidisWrite)
	}
	return string(d.transport)
}

// dial returns the node of the master behind addr (a proxy's address).
// Every client connects on its first call.
func (d *dialer) dial(addr string) (masterNode, error) {
	switch d.transport {
	case GoRedis:
		c := goredis.NewClient(&goredis.Options{Addr: addr, Username: d.username, Password: d.password, ReadTimeout: d.goRedisRead})
		n, err := goredisnode.New(c)
		if err != nil {
			c.Close()
			return masterNode{}, err
		}
		return masterNode{node: n, close: func() error { n.Close(); return c.Close() }}, nil
	case Rueidis:
		n, err := rueidisnode.Open(rueidis.ClientOption{
			InitAddress: []string{addr}, Username: d.username, Password: d.password,
			DisableCache:       true, // Open sets DisableRetry and refuses ConnLifetime: never resend a lock command
			ConnWriteTimeout:   d.rueidisWrite,
			ReadBufferEachConn: 64 << 10, WriteBufferEachConn: 64 << 10,
		})
		if err != nil {
			return masterNode{}, fmt.Errorf("workload: rueidis node of %s: %w", addr, err)
		}
		return masterNode{node: n, close: n.Close}, nil
	case ValkeyGo:
		n, err := valkeygo.Open(valkey.ClientOption{
			InitAddress: []string{addr}, Username: d.username, Password: d.password,
			DisableCache:       true,
			ConnWriteTimeout:   d.rueidisWrite,
			ReadBufferEachConn: 64 << 10, WriteBufferEachConn: 64 << 10,
		})
		if err != nil {
			return masterNode{}, fmt.Errorf("workload: valkey-go node of %s: %w", addr, err)
		}
		return masterNode{node: n, close: n.Close}, nil
	default:
		p := pool.New(pool.Config{Addr: addr, Username: d.username, Password: d.password, Pooled: d.transport == Pooled})
		return masterNode{node: p, close: p.Close}, nil
	}
}

// DialAs returns a Node of transport t to the master behind addr, logged
// in as username with password (ACL users), and how to close it.
func DialAs(t Transport, addr, username, password string) (redlock.Node, func() error, error) {
	mn, err := (&dialer{transport: t, username: username, password: password}).dial(addr)
	return mn.node, mn.close, err
}
