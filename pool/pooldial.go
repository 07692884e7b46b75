package pool

import (
	"context"
	"sync"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/nodeutil"
)

// pooledDialer makes the connections of the Pooled mode's redigo pool
// (its DialContext is take). A caller that finds no spare connection has
// one dialed for it unless enough dials for the waiting callers run
// already, so concurrent callers dial concurrently, as a redigo pool does:
// a burst of callers is not served one dial after the other, which would
// keep them waiting past a per-call timeout of 50ms on a fresh or churning
// pool. A dial is bounded by Config.DialTimeout and the Node's life, not by
// the caller (see dial.go): a connection whose caller gave up is kept as a
// spare for the next one, up to Config.MaxIdle of them.
type pooledDialer struct {
	cfg    Config
	id     *nodeutil.Identity
	ctx    context.Context // ends with the Node: cancels the dials in progress
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	spares  []*conn       // dialed, not taken yet
	dialing int           // dials in progress
	waiting int           // callers in take without a connection
	failed  int           // dials failed so far
	lastErr error         // the latest failed dial's error
	changed chan struct{} // closed, and replaced, when a dial ends
	closed  bool
}

func newPooledDialer(cfg Config, id *nodeutil.Identity) *pooledDialer {
	ctx, cancel := context.WithCancel(context.Background())
	return &pooledDialer{cfg: cfg, id: id, ctx: ctx, cancel: cancel, changed: make(chan struct{})}
}

// take returns a spare connection, or waits, until ctx ends, for one that
// a dial makes; a dial that fails while it waits fails it with the dial's
// error.
func (d *pooledDialer) take(ctx context.Context) (redis.Conn, error) {
	d.mu.Lock()
	d.waiting++
	failed := d.failed
	for {
		switch {
		case d.closed:
			d.waiting--
			d.mu.Unlock()
			return nil, errNodeClosed
		case len(d.spares) > 0:
			c := d.spares[len(d.spares)-1]
			d.spares = d.spares[:len(d.spares)-1]
			d.waiting--
			d.mu.Unlock()
			return c, nil
		case d.failed > failed:
			err := d.lastErr
			d.waiting--
			d.mu.Unlock()
			return nil, err
		}
		if d.dialing < d.waiting {
			d.dialing++
			d.wg.Go(d.dialOne)
		}
		changed := d.changed
		d.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			d.mu.Lock()
			d.waiting--
			d.mu.Unlock()
			return nil, ctx.Err()
		}
		d.mu.Lock()
	}
}

// dialOne makes one connection and keeps it as a spare, or records why
// it could not, and wakes the callers waiting in take.
func (d *pooledDialer) dialOne() {
	c, err := dial(d.ctx, d.cfg, d.id)
	if err != nil && d.ctx.Err() != nil {
		err = errNodeClosed
	}
	d.mu.Lock()
	d.dialing--
	switch {
	case err != nil:
		d.failed++
		d.lastErr = err
	case d.closed || len(d.spares) >= d.cfg.MaxIdle:
		c.Close()
	default:
		d.spares = append(d.spares, c)
	}
	close(d.changed)
	d.changed = make(chan struct{})
	d.mu.Unlock()
}

// close cancels the dials in progress, waits for them and closes the
// spare connections.
func (d *pooledDialer) close() {
	d.mu.Lock()
	d.closed = true
	spares := d.spares
	d.spares = nil
	close(d.changed) // wake the callers in take: they fail
	d.changed = make(chan struct{})
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
	for _, c := range spares {
		c.Close()
	}
}
