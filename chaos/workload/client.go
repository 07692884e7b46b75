package workload

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Client is one lock client of a run, with its own Locker.
type Client struct {
	ID     int
	Locker *redlock.Locker
	env    *Env
}

// Held is a lock a client was granted, recorded in the history.
type Held struct {
	Lock *redlock.Lock
	// ID is the lock's id in the history.
	ID int64
	// Token is the fencing token the client writes with.
	Token  int64
	client *Client
}

// Acquire locks the key named name for ttl, retrying until ctx ends (or
// trying once when once is set), and records the grant. The grant is
// recorded at the moment Lock returns, with the lock's Until as the end of
// its validity.
func (c *Client) Acquire(ctx context.Context, name string, ttl time.Duration, once bool) (*Held, error) {
	c.env.attempts.Add(1)
	key := c.env.Key(name)
	lock := c.Locker.Lock
	if once {
		lock = c.Locker.TryLock
	}
	lk, err := lock(ctx, key, ttl)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	token := c.env.fence(lk)
	id := c.env.History.Grant(c.ID, name, token, now, lk.Until())
	return &Held{Lock: lk, ID: id, Token: token, client: c}, nil
}

// Write offers a write with the lock's token to the resource the lock
// protects, and reports whether the resource accepted it.
func (h *Held) Write() bool {
	e := h.client.env
	now := time.Now()
	if !now.Before(h.Lock.Until()) {
		e.late.Add(1)
	}
	// The key name without the run's prefix is the resource's name.
	name := h.Lock.Key()[len(e.prefix):]
	return e.Resource(name).Write(h.client.ID, h.Token, e.History.Offset(now))
}

// ReleaseTimeout bounds an Unlock of Held.Release.
const ReleaseTimeout = 5 * time.Second

// Release records that the holder stops using the resource now, then
// unlocks. The unlock does not stop when ctx is cancelled (the end of a run
// must not cut releases short); it is bounded by ReleaseTimeout.
func (h *Held) Release(ctx context.Context) error {
	h.client.env.History.Release(h.ID, time.Now())
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ReleaseTimeout)
	defer cancel()
	return h.Lock.Unlock(ctx)
}
