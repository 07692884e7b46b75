package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/gomodule/redigo/redis"
)

// A master restarted with AOF and appendfsync always comes back with every
// acknowledged write and nothing else: its connections are gone and its
// script cache is empty (scripts live in memory only). RestartKept gives
// any node of a cluster that restart, whatever its persistence, so that a
// run without persistence can still restart masters the way a persistent
// master restarts, beside the kills that lose the data.

// DataKeeper is a Node that can restart keeping its data although it runs
// without persistence. The local backend's nodes are DataKeepers.
type DataKeeper interface {
	// RestartKeepingData stops the node with every key it holds written
	// out, and starts it again with them: the script cache empty, every
	// client connection closed, every key back with its expiry.
	RestartKeepingData(ctx context.Context) error
}

// RestartKept restarts n the way a master with AOF and appendfsync always
// restarts: connections closed, script cache empty, every key back. A
// persistent node is killed and started (its AOF keeps the data); any
// other must be a DataKeeper, or RestartKept returns ErrUnsupported.
func RestartKept(ctx context.Context, n Node) error {
	if n.Persistent() {
		return Restart(ctx, n, 0)
	}
	k, ok := n.(DataKeeper)
	if !ok {
		return fmt.Errorf("%w: restart %s keeping its data without persistence", ErrUnsupported, n.Name())
	}
	return k.RestartKeepingData(ctx)
}

// rdbFile is the snapshot a server writes to its directory by default, and
// loads from it when it starts without AOF.
const rdbFile = "dump.rdb"

// RestartKeepingData makes the server write its data out and exit
// (SHUTDOWN SAVE: a snapshot of every key, taken as the server stops, so
// no acknowledged write is lost), starts it again (it loads the snapshot)
// and removes the snapshot, so that a later Kill and Start still bring the
// node back empty.
func (n *localNode) RestartKeepingData(ctx context.Context) error {
	_, err := do(ctx, n.Addr(), "SHUTDOWN", "SAVE")
	var reply redis.Error
	switch {
	case err == nil:
		return fmt.Errorf("cluster: SHUTDOWN SAVE on %s answered instead of exiting", n.name)
	case errors.As(err, &reply):
		return fmt.Errorf("cluster: SHUTDOWN SAVE on %s: %w", n.name, err)
	}
	// The connection closed: the snapshot is written; wait for the exit.
	for n.s.Running() {
		if err := sleep(ctx, 2*time.Millisecond); err != nil {
			return fmt.Errorf("cluster: %s does not exit after SHUTDOWN SAVE: %w", n.name, err)
		}
	}
	if err := n.Start(ctx); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(n.s.Dir(), rdbFile)); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	return nil
}

// ScriptFlush empties the script cache of the node at addr (SCRIPT
// FLUSH), as an operator, a restart or a failover does: the next EVALSHA
// of every client gets NOSCRIPT.
func ScriptFlush(ctx context.Context, addr string) error {
	if _, err := do(ctx, addr, "SCRIPT", "FLUSH"); err != nil {
		return fmt.Errorf("cluster: script flush on %s: %w", addr, err)
	}
	return nil
}
