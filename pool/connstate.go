package pool

import (
	"fmt"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// A Node's connections are shared: by every concurrent caller at once in
// the pipelined mode, by one caller after another in the Pooled mode. A
// command that changes the state of its connection (a transaction, the
// database, the reply mode, a subscription, the user) would change it for
// the others, and is refused before anything is sent, in both modes; so is
// a blocking command (BLPOP, XREAD BLOCK, WAIT, ...) on the pipelined
// connection, where it would hold up the replies of every other caller
// (Config.Pooled runs them on a connection of their own). The command and
// its arguments are judged by the text that goes on the wire, whatever
// their Go types (nodeutil.CheckShared).

// ErrConnState is the error of a call whose command would change the
// state of a shared connection; nothing was sent. Match it with errors.Is.
var ErrConnState = nodeutil.ErrConnState

// ErrBlocking is the error of a blocking command on the pipelined shared
// connection; nothing was sent. Config.Pooled allows them.
var ErrBlocking = nodeutil.ErrBlocking

// checkShared returns an error matching ErrConnState or ErrBlocking when
// cmd must not go out on a shared connection.
func checkShared(cmd string, args []any, pipelined bool) error {
	if err := nodeutil.CheckShared(cmd, args, pipelined); err != nil {
		return fmt.Errorf("pool: %w", err)
	}
	return nil
}
