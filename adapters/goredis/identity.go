package goredis

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
)

// The master's identity (redlock.Abilities.Identity, for the restart
// guard; and for durable confirmations, durable.go). A Node over a
// *redis.Client (one server, or a failover client) reads it on every new
// connection of the client, in the connection's set-up: New chains an
// OnConnect in front of the client's own (Options().OnConnect, which
// go-redis reads at each new connection), which sends INFO server, INFO
// persistence and CONFIG GET appendfsync (nodeutil.IdentityCommands) as
// one pipeline. So it costs one round trip per new connection of the
// client, the application's own ones included, and nothing per call. A
// reply that is an error (INFO or CONFIG refused by an ACL) leaves the
// identity unknown, or the master not durable; a transport error fails
// the connection, as any set-up error does.
//
// The connections the client made before New (an application that PINGs
// its client at start-up) were set up without the Node's OnConnect. Until
// the Node has a reading, each call through it first sends the same
// pipeline through the client (on any of its connections), notes what it
// read, and only then sends its command. Why that is enough: a connection
// is accepted by one server process and ends with it, and every connection
// made before New was accepted before the reading was sent. A process that
// started after the reading (a restart since) accepted none of them: it
// answers only on connections made after it started, and those are read
// by the OnConnect before any command goes on them, and noted as the
// newest. So a reply on a connection made before New comes from the
// process read or from one that was up before it; on a plain client's one
// address that is the process read, since an older one is gone, and its
// connections with it. A reading through the client never replaces one
// that a new connection noted meanwhile (both are noted under one lock).
//
// A Node over any other client (a *redis.ClusterClient: many processes
// are one master there) knows no identity: Identity is not among its
// Abilities, and redlock.New refuses it while the restart guard is on.

// identity is what a Node knows of its master's process.
type identity struct {
	nodeutil.Identity
	read atomic.Bool // a reading was noted, or refused

	mu      sync.Mutex    // notes the readings one at a time
	reading chan struct{} // closed when the reading through the client ends; nil when none runs
	err     error         // that reading's transport error
}

// watchIdentity makes every new connection of c read the master's
// identity, after c's own OnConnect.
func (n *Node) watchIdentity(c *redis.Client) {
	opt := c.Options()
	own := opt.OnConnect
	opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		if own != nil {
			if err := own(ctx, cn); err != nil {
				return err
			}
		}
		return n.ident.identify(ctx, cn.Pipelined, true)
	}
}

// identify reads the master's identity with the pipelines of pipelined
// (a new connection's, or the client's) and notes it: always for a new
// connection (newest), and otherwise unless a reading was noted
// meanwhile. A reply that is an error is no error: the identity stays
// unknown (INFO refused) or the master not durable (CONFIG refused).
func (id *identity) identify(ctx context.Context, pipelined func(context.Context, func(redis.Pipeliner) error) ([]redis.Cmder, error), newest bool) error {
	var (
		server, persistence *redis.StringCmd
		fsync               *redis.MapStringStringCmd
	)
	_, err := pipelined(ctx, func(p redis.Pipeliner) error {
		server, persistence = p.Info(ctx, "server"), p.Info(ctx, "persistence")
		fsync = p.ConfigGet(ctx, "appendfsync")
		return nil
	})
	var reply redis.Error
	if err != nil && !errors.As(err, &reply) {
		return err // the connection is no good
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if !newest && id.read.Load() {
		return nil
	}
	if !id.Note(server.Val(), persistence.Val(), fsync.Val()["appendfsync"]) {
		refusal := server.Err()
		if refusal == nil {
			refusal = errors.New("INFO server names no run_id")
		}
		id.Refused(refusal)
	}
	id.read.Store(true)
	return nil
}

// known makes sure the Node has read its master's identity before a call
// goes out (see above): it returns at once once a reading was noted, and
// otherwise reads through c, one reading at a time (a caller waits for the
// one in flight, or for ctx). The reading runs on a goroutine of its own,
// under the client's timeouts, not ctx's: a short call does not cut it
// short for the next. Its transport error is the call's.
func (id *identity) known(ctx context.Context, c *redis.Client) error {
	if c == nil || id.read.Load() {
		return nil
	}
	id.mu.Lock()
	ch := id.reading
	if ch == nil {
		ch = make(chan struct{})
		id.reading = ch
		go func() {
			err := id.identify(context.WithoutCancel(ctx), c.Pipelined, false)
			id.mu.Lock()
			id.reading, id.err = nil, err
			id.mu.Unlock()
			close(ch)
		}()
	}
	id.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
		return ctx.Err()
	}
	if id.read.Load() {
		return nil
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	return fmt.Errorf("reading the master's identity: %w", id.err)
}

// Identity returns what the Node read of its master's process on the
// newest connection of its client (or, before the client's first new
// connection, through the client, before the Node's first call went out):
// the run id, when the process started at the latest (on this client's
// clock), its persistence and version. Before the Node's first call, when
// the master refuses INFO, and for a client other than a *redis.Client, it
// returns an error matching redlock.ErrNoIdentity. It is
// redlock.Abilities.Identity, which the restart guard uses.
func (n *Node) Identity() (redlock.Identity, error) {
	if n.rc == nil {
		return redlock.Identity{}, fmt.Errorf("goredis: %s: %w: %w", n.addr, redlock.ErrNoIdentity, errNoProcess)
	}
	return n.ident.Get()
}

// errNoProcess is why a Node over a client other than a *redis.Client
// knows no identity and confirms nothing.
var errNoProcess = errors.New("only a *redis.Client (one server, or a failover client) reaches one master process: a Redis Cluster is many")
