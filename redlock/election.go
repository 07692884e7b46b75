package redlock

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"
)

// Leader election over the masters, after etcd's concurrency.Election: a
// candidate leads while it holds the election's lock, a fenced lock
// (Config.Fencing's rules) kept renewed, whose holder record (WithMetadata)
// carries the leader's value and its term. The term is the lock's fencing
// token: it grows with every new leader, across restarts of the masters
// (fence.go), so that a resource that remembers the highest term it saw
// turns a deposed leader away. Observers read the leader from a quorum
// (Locker.Holder) whenever a master announces a release or a new record,
// and at least every ObservePoll.

// ErrNotLeader is matched by Proclaim when this Election does not lead.
var ErrNotLeader = errors.New("redlock: not the leader")

// Election is one candidate's part in the election named name: it
// campaigns, leads, proclaims and resigns; and anyone may ask it who leads
// (Leader, Observe). Its methods are safe for concurrent use.
type Election struct {
	l    *Locker
	name string
	ttl  time.Duration

	mu     sync.Mutex
	lk     *Lock // while it leads, or until Resign after a loss
	value  string
	rev    int64           // the last Proclaim's revision in this term
	ctx    context.Context // ends when this term's leadership does
	cancel context.CancelFunc
}

// Leader is a leader of an election, as a quorum of the masters says.
type Leader struct {
	// Value is what the leader campaigned with, or proclaimed last.
	Value string
	// Term is the leader's term: its lock's fencing token, greater than
	// every earlier leader's.
	Term int64
	// Rev is the value's revision within the term: 0 for the value the
	// leader campaigned with, then 1, 2, ... for its Proclaims, in the
	// order they were called.
	Rev int64
	// TTL is how long from the read a quorum of the masters is sure to
	// keep the leader (Holder.TTL); renewals keep moving it.
	TTL time.Duration
}

// MaxLeaderValueLen is the longest value a candidate may campaign with or
// proclaim: its holder record keeps it beside its term and revision (19
// digits each at most) in MaxMetadataLen bytes.
const MaxLeaderValueLen = MaxMetadataLen - len(leaderValue) - len(leaderTerm) - len(leaderRev) - 2*19

// The holder record's fields of an election's lock.
const (
	leaderValue = "value"
	leaderTerm  = "term"
	leaderRev   = "rev"
)

// leaderRecord is the holder record of a leader with value in term, at
// revision rev, or an error matching ErrInvalid when value is too long for
// one (MaxMetadataLen less the record's other fields).
func leaderRecord(value string, term, rev int64) (map[string]string, error) {
	md := map[string]string{leaderValue: value, leaderTerm: strconv.FormatInt(term, 10), leaderRev: strconv.FormatInt(rev, 10)}
	if err := checkMetadata(md); err != nil {
		return nil, fmt.Errorf("redlock: leader value of %d bytes: %w", len(value), err)
	}
	return md, nil
}

// NewElection returns the Election named name on l's masters, whose
// leaders hold it for ttl between renewals (a leader that stops renewing,
// or is cut off, loses it within ttl). It sends nothing. A bad name or ttl
// gives an error matching ErrInvalid.
func NewElection(l *Locker, name string, ttl time.Duration) (*Election, error) {
	if err := l.checkMade(); err != nil {
		return nil, err
	}
	if err := l.checkKey(name); err != nil {
		return nil, err
	}
	if err := l.checkTTL(ttl); err != nil {
		return nil, err
	}
	if err := checkDerivable(l.prefix + name); err != nil {
		return nil, err
	}
	return &Election{l: l, name: name, ttl: ttl}, nil
}

// Name returns the election's name (its lock's key).
func (e *Election) Name() string { return e.name }

// Campaign blocks until this candidate leads, with value, or until ctx
// ends (the error then matches ErrNotAcquired and ctx.Err()). It takes the
// election's lock as Locker.Lock does (waking when the leader resigns),
// fenced and renewed, then writes its value and term to the quorum and
// announces them: when Campaign returns, Leader and Observe can see it.
// The leadership lasts until Resign, or until the lock is lost (Context
// ends); ctx's end after Campaign returned does not end it. Campaigning
// while leading is refused with ErrInvalid: Proclaim changes the value.
func (e *Election) Campaign(ctx context.Context, value string) error {
	md, err := leaderRecord(value, math.MaxInt64, math.MaxInt64) // the longest it may get
	if err != nil {
		return err
	}
	delete(md, leaderTerm) // announced once the lock is granted
	delete(md, leaderRev)
	e.mu.Lock()
	leading := e.lk != nil && e.lk.Err() == nil
	e.mu.Unlock()
	if leading {
		return invalid("Campaign: %q already leads in term %d; Proclaim changes its value", e.name, e.Term())
	}
	lk, err := e.l.Lock(ctx, e.name, e.ttl, WithFencing(true), WithAutoRenew(true), WithMetadata(md))
	if err != nil {
		return err
	}
	md[leaderRev] = "0"
	md[leaderTerm] = strconv.FormatInt(lk.Fence(), 10)
	if err := lk.SetMetadata(ctx, md); err != nil {
		_ = lk.Unlock(context.WithoutCancel(ctx))
		return fmt.Errorf("redlock: campaign %q: announcing term %d: %w", e.name, lk.Fence(), err)
	}
	lctx, cancel := lk.Context(context.Background())
	e.mu.Lock()
	if e.cancel != nil { // a lost leadership's, not yet resigned
		e.cancel()
	}
	e.lk, e.value, e.rev, e.ctx, e.cancel = lk, value, 0, lctx, cancel
	e.mu.Unlock()
	return nil
}

// Proclaim changes the leader's value without a new term: on every master
// that still holds this candidate's lock, announced to observers. It
// fails with ErrNotLeader when this Election does not lead, and as
// Lock.SetMetadata does (ErrLockLost) when too few masters took it.
func (e *Election) Proclaim(ctx context.Context, value string) error {
	lk := e.leading()
	if lk == nil {
		if _, err := leaderRecord(value, 0, 0); err != nil {
			return err
		}
		return fmt.Errorf("redlock: proclaim %q: %w", e.name, ErrNotLeader)
	}
	e.mu.Lock()
	e.rev++
	rev := e.rev
	e.mu.Unlock()
	md, err := leaderRecord(value, lk.Fence(), rev)
	if err != nil {
		return err
	}
	if err := lk.SetMetadata(ctx, md); err != nil {
		return err
	}
	e.mu.Lock()
	if e.lk == lk && e.rev == rev {
		e.value = value
	}
	e.mu.Unlock()
	return nil
}

// Resign gives up the leadership (Lock.Unlock of its lock, which wakes
// the other candidates and the observers) and ends its Context. Without
// a leadership it does nothing and returns nil; after a loss it releases
// whatever is left and returns the Unlock's error. The leadership is given
// up whatever the error says: an error matching ErrLockLost may also mean
// that too few masters answered in time, while the releases, sent to
// every master and retried, still land.
func (e *Election) Resign(ctx context.Context) error {
	e.mu.Lock()
	lk, cancel := e.lk, e.cancel
	e.lk, e.cancel, e.ctx = nil, nil, nil
	e.mu.Unlock()
	if lk == nil {
		return nil
	}
	defer cancel()
	return lk.Unlock(ctx)
}

// leading returns the lock of the current leadership, or nil.
func (e *Election) leading() *Lock {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lk == nil || e.lk.Err() != nil {
		return nil
	}
	return e.lk
}

// Term returns the term of this candidate's last leadership, from its
// Campaign's return until Resign (also once the leadership was lost:
// Context tells whether it still leads), and 0 before and after.
func (e *Election) Term() int64 {
	e.mu.Lock()
	lk := e.lk
	e.mu.Unlock()
	if lk != nil {
		return lk.Fence()
	}
	return 0
}

// Context returns a context that ends when this candidate's leadership
// ends (a Resign, a loss of its lock), with context.Cause saying why; one
// that has ended already when it does not lead. Run the leader's work
// with it, and pass Term to what it acts on.
func (e *Election) Context() context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ctx == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(ErrNotLeader)
		return ctx
	}
	return e.ctx
}

// Leader reads the current leader from a quorum of the masters. When
// there is none (no candidate holds the lock, or the new one has not yet
// announced its term), the error matches ErrNotHeld; when too few masters
// answered, ErrUnavailable.
//
// The masters that hold the leader's lock may keep different revisions of
// its value (a Proclaim that reached some of them, or is on its way):
// Leader returns the latest revision any of them keeps.
func (e *Election) Leader(ctx context.Context) (Leader, error) {
	_, hv, ttl, err := e.l.readHolder(ctx, e.name)
	if err != nil {
		return Leader{}, err
	}
	var best Leader
	for _, rec := range hv.fields {
		term, err1 := strconv.ParseInt(rec[leaderTerm], 10, 64)
		rev, err2 := strconv.ParseInt(rec[leaderRev], 10, 64)
		if err1 != nil || err2 != nil || term <= 0 {
			continue
		}
		if best.Term == 0 || rev > best.Rev {
			best = Leader{Value: rec[leaderValue], Term: term, Rev: rev, TTL: ttl}
		}
	}
	if best.Term == 0 {
		return Leader{}, fmt.Errorf("redlock: leader of %q: its term is not announced yet: %w", e.name, ErrNotHeld)
	}
	return best, nil
}
