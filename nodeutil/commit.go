package nodeutil

import (
	"context"
	"sync"
	"time"
)

// Committer confirms that a master's writes are durable (on its AOF on
// disk, on its replicas), for many callers at once: group commit. One
// confirmation is a probe write and a WAITAOF (or WAIT) after it, on a
// connection of its own (Commit): the master's AOF and its replication
// stream are written in the order the commands ran, so once the probe is
// on disk (or on the replicas), every write that ran before it is too,
// whatever connection it came on. A caller whose write has run (its reply
// came back) asks for a confirmation; the confirmation that starts next
// covers it and every caller that asked meanwhile: a burst of durable
// grants shares one fsync, and none waits for more than the one in flight
// and its own. The blocking WAITAOF never goes out on a connection that
// other callers share.
type Committer struct {
	// Commit writes the probe and waits for it to be durable, bounded by
	// ctx; it returns how many local AOFs (0 or 1) and replicas
	// acknowledged it, as WAITAOF does (WAIT: local 0).
	Commit func(ctx context.Context) (local, replicas int, err error)

	mu      sync.Mutex
	waiting []waiter
	running bool
}

// Durable asks for a confirmation that covers every write that ran before
// the call, and returns at once; done runs once with the outcome, on a
// goroutine of the Committer's. ctx's deadline bounds the confirmation
// that covers the call: one confirmation, shared by every caller in it,
// runs until the latest of their deadlines (none: until Commit returns)
// and keeps the values of the first; a caller's cancellation ends nothing
// that others share.
func (c *Committer) Durable(ctx context.Context, done func(local, replicas int, err error)) {
	c.mu.Lock()
	c.waiting = append(c.waiting, waiter{ctx, done})
	if c.running {
		c.mu.Unlock()
		return
	}
	c.running = true
	c.mu.Unlock()
	go c.run()
}

// DefaultConfirmWait is how long a confirmation waits for its
// acknowledgements when its context has no deadline.
const DefaultConfirmWait = time.Second

// ConfirmMargin is what a confirmation keeps between the end of the
// master's wait and its context's deadline, at most: the master answers
// WAIT or WAITAOF with the counts it got before the connection's deadline
// passes, so that a refusal reads "0 of 1 replicas acknowledged", not as
// a timeout of the connection. A master times a blocked command out in
// its cron, up to 1/hz (100ms by default) late.
const ConfirmMargin = 250 * time.Millisecond

// ConfirmWait is the timeout a confirmation bounded by ctx gives WAIT or
// WAITAOF: the time left to ctx's deadline less a margin (ConfirmMargin,
// or half the time left when that is shorter), at least a millisecond (0
// would make the master wait for ever), or DefaultConfirmWait when ctx
// has none.
func ConfirmWait(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		return max(left-min(ConfirmMargin, left/2), time.Millisecond)
	}
	return DefaultConfirmWait
}

// waiter is one caller of Durable.
type waiter struct {
	ctx  context.Context
	done func(local, replicas int, err error)
}

// run confirms batch after batch while callers wait: each batch is the
// callers that asked before its probe was written.
func (c *Committer) run() {
	for {
		c.mu.Lock()
		batch := c.waiting
		c.waiting = nil
		if len(batch) == 0 {
			c.running = false
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		ctx, cancel := batchContext(batch)
		local, replicas, err := c.Commit(ctx)
		cancel()
		for _, w := range batch {
			w.done(local, replicas, err)
		}
	}
}

// batchContext is the context of one confirmation: the first caller's
// values, no cancellation, and the latest deadline of the batch (none if a
// caller has none).
func batchContext(batch []waiter) (context.Context, context.CancelFunc) {
	ctx := context.WithoutCancel(batch[0].ctx)
	var latest time.Time
	for _, w := range batch {
		dl, ok := w.ctx.Deadline()
		if !ok {
			return ctx, func() {}
		}
		if dl.After(latest) {
			latest = dl
		}
	}
	return context.WithDeadline(ctx, latest)
}

// Durables is the redlock.Abilities.Confirm of a Node, made of
// Committers: one per kind of confirmation a Locker asks for (local and
// replicas, and the probe key), made at its first use. A confirmation made
// by another master process than the one the Node knew when a caller asked
// for it (a restart, or a failover, in between) confirms nothing about the
// writes before: the caller gets an error that matches ErrMasterChanged.
// Set Commit and RunID before the first call.
type Durables struct {
	// Commit writes probe and waits until it is durable as asked (in the
	// master's AOF on disk with local; acknowledged by replicas
	// replicas), bounded by ctx (ConfirmWait), as Committer.Commit does,
	// and returns the run id of the master process that answered ("" when
	// unknown).
	Commit func(ctx context.Context, probe string, local bool, replicas int) (l, r int, ranOn string, err error)
	// RunID returns the run id of the master process the Node knows now
	// (Identity.RunID), "" when unknown.
	RunID func() string

	mu    sync.Mutex
	kinds map[durableKind]*kindCommitter
}

// durableKind is what a confirmation writes and waits for.
type durableKind struct {
	probe    string
	local    bool
	replicas int
}

// kindCommitter confirms one kind. ranOn is the run id of the master its
// last confirmation ran on: Commit writes it, and the done funcs of that
// confirmation read it after Commit returned, on the Committer's
// goroutine.
type kindCommitter struct {
	Committer
	ranOn string
}

// Confirm asks for a confirmation that every write that ran on the master
// before the call is durable as asked, writing probe, and returns at once;
// done runs once with the counts acknowledged, or the error, on a
// goroutine of the Committer's. It is redlock.Abilities.Confirm.
func (d *Durables) Confirm(ctx context.Context, probe string, local bool, replicas int, done func(local, replicas int, err error)) {
	want := d.RunID()
	k := d.committer(durableKind{probe, local, replicas})
	k.Durable(ctx, func(l, r int, err error) {
		if err == nil {
			err = checkMaster(want, k.ranOn)
		}
		done(l, r, err)
	})
}

// committer returns the committer of kind, made at its first use.
func (d *Durables) committer(kind durableKind) *kindCommitter {
	d.mu.Lock()
	defer d.mu.Unlock()
	if k := d.kinds[kind]; k != nil {
		return k
	}
	if d.kinds == nil {
		d.kinds = make(map[durableKind]*kindCommitter)
	}
	k := &kindCommitter{}
	k.Commit = func(ctx context.Context) (l, r int, err error) {
		l, r, k.ranOn, err = d.Commit(ctx, kind.probe, kind.local, kind.replicas)
		return l, r, err
	}
	d.kinds[kind] = k
	return k
}
