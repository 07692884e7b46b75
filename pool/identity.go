package pool

import (
	"context"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
)

// The restart guard (redlock.Abilities.Identity) needs to know when the master
// a Node talks to is a new process: one that restarted and may have lost
// the locks it held. Every new connection (pipelined, pooled or pub/sub)
// reads INFO server and persistence, and CONFIG GET appendfsync, once, as
// part of its set-up (one round trip, pipelined): the master's run_id,
// which a restart changes; its uptime, from which its start on this
// client's monotonic clock follows; and whether it persists every write
// (AOF on, appendfsync always), which makes the guard needless. That costs
// nothing per call. A master that refuses INFO (renamed or forbidden by an
// ACL) leaves the identity unknown, with the refusal as the reason, and a
// Locker with the guard on says so; one that refuses CONFIG counts as not
// persisting every write. nodeutil.Identity keeps the readings.

// identify reads the master's identity on a new connection, bounded by ctx,
// notes it in id, and returns the run id it read ("" when unknown). Error
// replies (INFO or CONFIG refused) are no error: the identity stays
// unknown, or not durable; a transport error fails the connection's
// set-up.
func identify(ctx context.Context, c redis.Conn, id *nodeutil.Identity) (string, error) {
	if id == nil {
		return "", nil
	}
	for _, cmd := range nodeutil.IdentityCommands {
		if err := c.Send(cmd[0], redis.Args{}.AddFlat(cmd[1:])...); err != nil {
			return "", err
		}
	}
	if err := c.Flush(); err != nil {
		return "", err
	}
	texts := make([]string, len(nodeutil.IdentityCommands))
	var refusal error
	for i := range texts {
		reply, err := redis.ReceiveContext(c, ctx)
		if _, refused := err.(redis.Error); err != nil && !refused {
			return "", err // a transport error: the connection is no good
		}
		if i == 0 && err != nil {
			refusal = err
		}
		if i == 2 {
			fsync, _ := redis.StringMap(reply, err)
			texts[i] = fsync["appendfsync"]
		} else {
			texts[i], _ = redis.String(reply, err)
		}
	}
	if !id.Note(texts[0], texts[1], texts[2]) {
		if refusal == nil {
			refusal = fmt.Errorf("INFO server names no run_id")
		}
		id.Refused(refusal)
		return "", nil // INFO refused, or no run id: the identity stays unknown
	}
	return nodeutil.InfoField(texts[0], "run_id"), nil // this connection's, whatever others noted since
}

// Identity returns what the Node read of its master's process on its
// newest connection: its run id, when it started at the latest (on this
// client's clock; uptime counts whole seconds), its persistence and its
// version. Before the first connection, and when the master refuses INFO,
// it returns an error matching redlock.ErrNoIdentity that says why. It is
// redlock.Abilities.Identity, which the restart guard uses.
func (n *Node) Identity() (redlock.Identity, error) {
	return n.ident.Get()
}
