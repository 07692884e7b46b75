package scenario

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/quorumlock/quorumlock/redlock"
)

// grantNode is a master as one client sees it, which strikes the instant
// the master grants that client a key for the first time: on reads the
// reply of the first script call on the key that the master answers with
// a grant (an acquire's count or fencing token; no release or Extend
// comes before the first grant), runs strike before the client sees the
// reply, then hands the reply on. So a fault lands after the master took
// the grant and before the client could count it, or ask for it to be
// confirmed durable.
//
// It forwards the abilities that the scenarios' protections need
// (Identity, and Confirm through its own) and hides the others, so that the
// Locker calls Eval, where the grant is seen.
type grantNode struct {
	redlock.Node
	key    string
	strike func() error // nil: none
	// prime, if set, runs once, before the first script call on the key
	// goes to the master; an error fails that call, unsent, and is
	// struck's. The everysec scenarios fsync there, so that the window a
	// power loss must come within starts at the grant, not before the
	// client's connection set-up.
	prime     func() error
	primeOnce sync.Once
	primeErr  error
	// confirmed, if set, is called with every durable confirmation the
	// master delivers (Durable's done), on any goroutine.
	confirmed func(local, replicas int, err error)

	once sync.Once
	err  error       // strike's
	done atomic.Bool // strike ran

	mu    sync.Mutex
	after *error // the outcome of the first confirmation asked for after the strike
}

var _ redlock.Capable = (*grantNode)(nil)

// Abilities forwards the wrapped Node's Identity, and Confirm through the
// grantNode's own; its script calls go through Eval.
func (n *grantNode) Abilities() redlock.Abilities {
	inner := redlock.AbilitiesOf(n.Node)
	a := redlock.Abilities{Identity: inner.Identity}
	if inner.Confirm != nil {
		a.Confirm = n.Confirm
	}
	return a
}

// Eval strikes on the first grant of the key.
func (n *grantNode) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	if n.prime != nil && len(keys) >= 2 && keys[1] == n.key {
		n.primeOnce.Do(func() { n.primeErr = n.prime() })
		if n.primeErr != nil {
			return nil, n.primeErr
		}
	}
	reply, err := n.Node.Eval(ctx, hash, src, keys, args...)
	if c, ok := reply.(int64); err == nil && ok && c > 0 && len(keys) >= 2 && keys[1] == n.key && n.strike != nil {
		n.once.Do(func() {
			n.err = n.strike()
			n.done.Store(true)
		})
	}
	return reply, err
}

// struck returns strike's error, nil before it ran.
func (n *grantNode) struck() error {
	n.primeOnce.Do(func() {}) // waits for a prime under way
	if n.primeErr != nil {
		return n.primeErr
	}
	var err error
	n.once.Do(func() { err = fmt.Errorf("scenario: no grant of %s seen", n.key) })
	if err != nil {
		return err
	}
	return n.err
}

// Confirm forwards to the wrapped Node's.
func (n *grantNode) Confirm(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error)) {
	confirm := redlock.AbilitiesOf(n.Node).Confirm
	if confirm == nil {
		done(0, 0, fmt.Errorf("scenario: %s cannot confirm durable grants", n.Addr()))
		return
	}
	after := n.done.Load()
	confirm(ctx, probe, local, replicas, func(l, r int, err error) {
		if after {
			n.mu.Lock()
			if n.after == nil {
				n.after = &err
			}
			n.mu.Unlock()
		}
		if n.confirmed != nil {
			n.confirmed(l, r, err)
		}
		done(l, r, err)
	})
}

// confirmedAfter returns the outcome of the first durable confirmation
// asked for after the strike, and false when none was.
func (n *grantNode) confirmedAfter() (error, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.after == nil {
		return nil, false
	}
	return *n.after, true
}
