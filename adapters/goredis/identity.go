package goredis

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

// The master's identity (redlock.Abilities.Identity, for the
// restart guard). A Node over a *redis.Client (one server, or a failover
// client) reads it on every new connection of the client, in the
// connection's set-up: New chains an OnConnect in front of the client's
// own (Options().OnConnect, which go-redis reads at each new connection),
// which sends INFO server, INFO persistence and CONFIG GET appendfsync
// (nodeutil.IdentityCommands) as one pipeline. So it costs one round trip
// per new connection of the client, the application's own ones included,
// and nothing per call. A reply that is an error (INFO or CONFIG refused
// by an ACL) leaves the identity unknown, or the master not durable; a
// transport error fails the connection, as any set-up error does. A Node
// over any other client (a *redis.ClusterClient: many processes are one
// master there) knows no identity, and the restart guard cannot apply.

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
		return n.identify(ctx, cn)
	}
}

// identify reads the master's identity on the new connection cn.
func (n *Node) identify(ctx context.Context, cn *redis.Conn) error {
	var (
		server, persistence *redis.StringCmd
		fsync               *redis.MapStringStringCmd
	)
	_, err := cn.Pipelined(ctx, func(p redis.Pipeliner) error {
		server, persistence = p.Info(ctx, "server"), p.Info(ctx, "persistence")
		fsync = p.ConfigGet(ctx, "appendfsync")
		return nil
	})
	var reply redis.Error
	if err != nil && !errors.As(err, &reply) {
		return err // the connection is no good
	}
	n.ident.Note(server.Val(), persistence.Val(), fsync.Val()["appendfsync"])
	return nil
}

// Identity returns what the Node read of its master's process on the
// newest connection of its client: the run id, when the process started at
// the latest (on this client's clock), its persistence and version. Before
// the client's first new connection after New (connections it made before
// are not read), when the master refuses INFO, and for a client other than
// a *redis.Client, it returns an error matching redlock.ErrNoIdentity. It
// is redlock.Abilities.Identity, which the restart guard uses.
func (n *Node) Identity() (redlock.Identity, error) {
	return n.ident.Get()
}
