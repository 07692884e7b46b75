package workload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// Client is one lock client of a run, with its own Lockers over its own
// proxies.
type Client struct {
	ID int
	// Locker is the client's Locker as EnvConfig.Locker configured it
	// (fenced by default); reentrant and read-write locks use it too.
	Locker *redlock.Locker
	// plain is the same without fencing. Renewed and extended holds take
	// a Locker of their own (watched).
	plain  *redlock.Locker
	env    *Env
	owners int // reentrant owners this client has been, for fresh owner ids
	ops    int // acquisitions it passed WithMetadata, for the records' fields
	// obs observes every Locker of the client (observe.go).
	obs *observer
	// nodes and cfg are what the Lockers were made of: a crashable
	// Locker (crash.go) is made of the same.
	nodes []redlock.Node
	cfg   redlock.Config
	// sh is the state the clients of the Env share (shared.go).
	sh *shared
	// long is the same client with Lockers of its own for the long TTLs
	// of its private keys and blocked calls (LongestTTL). The masters'
	// records share every client's longest TTL with every other
	// (redlock/guard.go), so it no longer keeps them out of the others'
	// guard; it is kept for the Lockers' own state (their queues).
	long *Client
	// probing is the same client with Lockers of its own for the probes,
	// without the restart guard (RestartGuard -1): the probes run on
	// healed masters, on keys of their own that no lock held before a
	// restart, which the guard is about; with it, a master restarted late
	// in the workload would refuse the bare quorums some probes need.
	probing *Client
}

// view returns a copy of c whose Lockers are made of cfg: the same
// client (its id, nodes, observer and history), other Lockers.
func (c *Client) view(cfg redlock.Config) (*Client, error) {
	v := *c
	v.cfg = cfg
	var err error
	if v.Locker, err = redlock.New(c.nodes, cfg); err != nil {
		return nil, err
	}
	plain := cfg
	plain.Fencing = false
	if v.plain, err = redlock.New(c.nodes, plain); err != nil {
		return nil, err
	}
	return &v, nil
}

func newClient(id int, e *Env, nodes []redlock.Node, cfg redlock.Config) (*Client, error) {
	c := &Client{ID: id, env: e, nodes: nodes, cfg: cfg, sh: newShared()}
	if len(e.clients) > 0 {
		c.sh = e.clients[0].sh
	}
	c.obs = newObserver(c, cfg.Observer, nodes)
	cfg.Observer = c.obs
	v, err := c.view(cfg)
	if err != nil {
		return nil, err
	}
	c.cfg, c.Locker, c.plain = cfg, v.Locker, v.plain
	if c.long, err = c.view(cfg); err != nil {
		return nil, err
	}
	unguarded := cfg
	unguarded.RestartGuard = -1
	if c.probing, err = c.view(unguarded); err != nil {
		return nil, err
	}
	c.probing.long = c.probing // the probes' long TTLs too
	return c, nil
}

// Held is a lock a client was granted, recorded in the history.
type Held struct {
	Lock *redlock.Lock
	// ID is the lock's id in the history.
	ID int64
	// Token is the fencing token the client writes with.
	Token int64
	// name is the lock's name in the run (the checker's key); target
	// says where its state lies on the masters.
	name   string
	target target
	client *Client
	// since is when its acquire was called: failures of the client's
	// calls from then on may excuse what the masters keep of it.
	since time.Time
	// record is the holder record it keeps (record.go), nil for none.
	record *target
}

// Acquire locks the key named name for ttl, retrying until ctx ends (or
// trying once when once is set), and records the call. The grant is
// recorded at the moment Lock returns, with the lock's Until as the end of
// its validity.
func (c *Client) Acquire(ctx context.Context, name string, ttl time.Duration, once bool) (*Held, error) {
	key := c.env.Key(name)
	lock := c.Locker.Lock
	if once {
		lock = c.Locker.TryLock
	}
	return c.record(checker.Event{Key: name}, target{mode: modeString, key: key},
		func() (*redlock.Lock, error) { return lock(ctx, key, ttl) })
}

// record runs the acquire call, records it in the history as ev (Key,
// Owner, Shared) with its invocation and response times, and returns the
// hold. t locates the lock's state on the masters (its token is filled in
// from the lock unless set).
func (c *Client) record(ev checker.Event, t target, call func() (*redlock.Lock, error)) (*Held, error) {
	return c.recordFrom(time.Now(), ev, t, call)
}

// recordFrom is record of a call invoked at start.
func (c *Client) recordFrom(start time.Time, ev checker.Event, t target, call func() (*redlock.Lock, error)) (*Held, error) {
	e := c.env
	e.attempts.Add(1)
	ev.Client = c.ID
	lk, err := call()
	now := time.Now()
	if err != nil {
		e.History.Attempt(ev, start, now, Outcome(err))
		return nil, err
	}
	ev.Token = e.fence(lk)
	if t.member == "" {
		t.member = lk.Token()
	}
	id := e.History.GrantCall(ev, start, now, lk.Until())
	return &Held{Lock: lk, ID: id, Token: ev.Token, name: ev.Key, target: t, client: c, since: start}, nil
}

// Outcome classifies a failed acquire: Unknown when it may have been
// applied on some masters (the context ended, or a master failed: a
// timeout, a transport error), Refused when every master answered.
func Outcome(err error) checker.Outcome {
	var q *redlock.QuorumError
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return checker.Unknown
	case errors.As(err, &q) && (q.Failed > 0 || q.Pending > 0 || q.Late):
		return checker.Unknown
	case errors.As(err, &q):
		return checker.Refused
	}
	return checker.Unknown
}

// Write offers a write with the lock's token to the resource the lock
// protects, and reports whether the resource accepted it.
func (h *Held) Write() bool {
	e := h.client.env
	now := time.Now()
	if !now.Before(h.Lock.Until()) {
		e.late.Add(1)
	}
	return e.Resource(h.name).Write(h.client.ID, h.Token, e.History.Offset(now))
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

// releaseWith records that the holder stops now, then unlocks with ctx as
// it is, an ended one included.
func (h *Held) releaseWith(ctx context.Context) error {
	h.client.env.History.Release(h.ID, time.Now())
	return h.Lock.Unlock(ctx)
}

// noteUntil records the lock's Until as of now: after an Extend, or while
// a renewed lock is held.
func (h *Held) noteUntil() {
	h.client.env.History.Extend(h.ID, time.Now(), h.Lock.Until())
}

// watched returns a Locker configured as the client's, with fencing and
// AutoRenew as given, whose events are those of one hold: bind its
// observer to the hold once it is granted.
func (c *Client) watched(fencing, autoRenew bool) (*redlock.Locker, *holdObserver, error) {
	o := &holdObserver{observer: c.obs}
	cfg := c.cfg
	cfg.Fencing, cfg.AutoRenew, cfg.Observer = fencing, autoRenew, o
	l, err := redlock.New(c.nodes, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("workload: a watched Locker: %w", err)
	}
	return l, o, nil
}
