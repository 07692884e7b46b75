package pool_test

import (
	"context"
	"errors"
	"testing"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/pool"
)

// durable runs n.Durable and returns what it delivered.
func durable(n *pool.Node, local bool, replicas int) (l, r int, err error) {
	type outcome struct {
		l, r int
		err  error
	}
	ch := make(chan outcome, 1)
	n.Durable(context.Background(), local, replicas, func(l, r int, err error) { ch <- outcome{l, r, err} })
	o := <-ch
	return o.l, o.r, o.err
}

// A confirmation made by another master process than the one that took
// the write confirms nothing: the master restarted (empty) after the
// write, and the confirmation, on a connection dialed after the restart,
// must fail with nodeutil.ErrMasterChanged, not confirm the lost write.
// The next one, asked of the new process, confirms.
func TestDurableMasterChanged(t *testing.T) {
	modes(t, func(t *testing.T, cfg pool.Config) {
		srv, n := start(t, redisproc.Options{}, cfg)
		if _, err := n.Do(t.Context(), "SET", "grant", "1"); err != nil {
			t.Fatal(err)
		}
		if err := srv.Restart(0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := durable(n, false, 0); !errors.Is(err, nodeutil.ErrMasterChanged) {
			t.Errorf("confirmation after a restart: %v, want ErrMasterChanged", err)
		}
		if _, _, err := durable(n, false, 0); err != nil {
			t.Errorf("the next confirmation, asked of the new process: %v", err)
		}
	})
}
