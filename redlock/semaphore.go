package redlock

import (
	"context"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/redlock/layout"
)

// A semaphore over a quorum is K permit locks, each an ordinary Redlock.
//
// The obvious design, a counter on each master that admits up to K holders
// and a holder that needs a majority of them, is unsafe for K >= 2: the N
// masters have N·K places, and K+1 holders that each need Q masters fit in
// them whenever (K+1)·Q <= N·K. With N = 5 and K = 2, three holders with
// three masters each fill 9 of the 10 places. Counting is safe only with
// the smallest Q such that (K+1)·Q > N·K, which costs fault tolerance: N = 5
// needs Q = 4 for K = 2 and K = 3 (one master may fail instead of two), and
// Q = N for every K >= N-1 (no master may fail).
//
// Here permit i is the plain lock "{key}:permit:i", acquired with the
// Locker's quorum like any lock. Each permit has at most one holder, so the
// semaphore has at most K; it keeps every rule and all the fault tolerance
// of a single lock (a minority of the masters may fail), whatever K is. The
// price is time: an acquisition tries the permits one after another, from
// a random one (which spreads competing clients apart), until one is
// granted: up to K rounds when the semaphore is full.

// MaxPermits is the most permits a Semaphore may have. An acquisition of a
// full semaphore makes one round per permit; beyond about a thousand that
// takes seconds, and a counting design suits better.
const MaxPermits = 1024

// Semaphore lets at most K holders in at once. Each permit is a lock of
// its own, "{key}:permit:0" to "{key}:permit:K-1" (or "key:permit:i" when
// key has a hash tag of its own), acquired and held like a plain lock: with
// the Locker's quorum, validity, retry, renewal and release rules. The
// semaphore tolerates what a single lock tolerates, the failure of any
// minority of the masters. All its keys share key's Redis Cluster hash
// slot; a key without a hash tag that contains '}' is refused (ErrInvalid).
//
// Every holder holds a different permit, so "at most K" holds as mutual
// exclusion does for a lock, and only under the same conditions (see the
// package documentation). A semaphore's K is part of its name: holders of
// one key must agree on it, for a semaphore with a smaller K ignores the
// permits above its own. Names are per kind of lock: do not lock a key both
// as a semaphore and otherwise.
//
// With Config.Fencing every hold carries a fencing token (Lock.Fence) from
// the semaphore's counter "{key}:fence": strictly greater than the token of
// every hold of the semaphore that was granted before this acquisition
// began, in particular of every earlier holder of the same permit
// (Lock.Permit). A fenced resource keeps the highest token per permit.
type Semaphore struct {
	l   *Locker
	key string
	k   int
}

// Semaphore returns the semaphore named key with k permits. A k outside
// [1, MaxPermits] is refused by Acquire and TryAcquire (ErrInvalid), which
// then send nothing.
func (l *Locker) Semaphore(key string, k int) *Semaphore {
	return &Semaphore{l: l, key: key, k: k}
}

// TryAcquire makes one pass over the permits, from a random one, and
// returns the first that is granted, for ttl. When none is, the error
// matches ErrNotAcquired and is the *QuorumError of the last permit tried.
// opts override the Locker's Config for this call (Option).
func (s *Semaphore) TryAcquire(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return s.acquire(ctx, ttl, false, opts)
}

// Acquire takes a permit for ttl, waiting as Locker.Lock does: after each
// pass over the permits it waits for the Config.Retry backoff or, sooner,
// for a release of any permit (announced by a master, or an Unlock through
// the same Locker), until ctx ends. Acquire calls of one Locker for one
// semaphore queue up in order, as Lock calls for one key do.
//
// The returned *Lock is an ordinary lock on one permit: Extend, Unlock,
// Done, Err, Context and renewal work on it as on any lock. Its Key is the
// semaphore's key; Lock.Permit says which permit it holds.
//
// opts override the Locker's Config for this call (Option; WithMaxAttempts
// counts passes over the permits, WithToken's attempt numbers count every
// permit tried).
func (s *Semaphore) Acquire(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return s.acquire(ctx, ttl, true, opts)
}

// Permit returns which permit of its semaphore lk holds, 0 to K-1, or -1
// when lk is not a semaphore's.
func (lk *Lock) Permit() int {
	if lk.v.kind != KindSemaphore {
		return -1
	}
	k := lk.keys[0]
	i, err := strconv.Atoi(k[strings.LastIndexByte(k, ':')+1:])
	if err != nil {
		return -1
	}
	return i
}

// permitKey names permit i of the semaphore key, in key's hash slot.
func permitKey(key string, i int) string { return layout.Permit(key, i) }

// permit returns the variant and the keys of permit i: a plain lock on its
// key, or a fenced one whose counter is the semaphore's, as cc says; with
// cc's metadata, a holder record of its own beside the permit's key.
func (s *Semaphore) permit(i int, cc *callConfig) (*variant, []string) {
	keys := []string{permitKey(s.l.prefix+s.key, i)}
	v := &variant{
		kind:    KindSemaphore,
		acquire: acquireScript,
		extend:  extendScript,
		check:   checkScript,
		release: releaseScript,
	}
	if cc.fencing {
		keys = append(keys, fenceKey(s.l.prefix+s.key))
		v.acquire, v.fenced = fenceAcquireScript, true
	}
	v.keys = func(string) []string { return keys }
	if cc.metadata != nil {
		v = recordedKind(v, layout.Holder(keys[0]), cc.metadata)
		keys = v.keys("")
	}
	return v, keys
}

// check refuses bad input before anything is sent.
func (s *Semaphore) check(ctx context.Context, ttl time.Duration) error {
	if err := s.l.checkCall(ctx, s.key, ttl); err != nil {
		return err
	}
	if s.k < 1 || s.k > MaxPermits {
		return invalid("semaphore %q: %d permits: it must have between 1 and %d", s.key, s.k, MaxPermits)
	}
	return checkDerivable(s.l.prefix + s.key)
}

// acquire makes passes over the permits until one is granted, or only one
// pass when retry is false: Locker.attempts' loop, with a pass of up to K
// attempts where Locker.acquire makes one. The waiting between passes is
// the same, keyed by the semaphore's key, on which every permit's Unlock
// announces its release (the Lock's key).
func (s *Semaphore) acquire(ctx context.Context, ttl time.Duration, retry bool, opts []Option) (lk *Lock, err error) {
	l := s.l
	attempts := 0
	if l.observer != nil {
		start := l.clock.Now()
		defer func() {
			l.observer.Acquire(AcquireEvent{Key: s.key, Kind: KindSemaphore, Wait: l.clock.Now().Sub(start), Attempts: attempts, Err: err, ctx: detach(ctx)})
		}()
	}
	if err := s.check(ctx, ttl); err != nil {
		return nil, err
	}
	cc, err := l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	var w waiting
	l.initWaiting(&w, l.prefix+s.key, retry, cc.retry)
	defer w.close()
	if err := w.start(ctx); err != nil {
		return nil, l.quorumError(opLock, s.key, nil, err)
	}
	var token string
	l.attempts(ctx, cc, &w, retry, func(int) bool {
		off := mrand.IntN(s.k)
		for j := range s.k {
			if cerr := ctx.Err(); cerr != nil { // send nothing more; err stays the last attempt's
				if err == nil {
					err = l.quorumError(opLock, s.key, nil, cerr)
				}
				return false
			}
			attempts++
			next, terr := cc.newToken(attempts, token)
			if terr != nil {
				err = terr
				return true // no more attempts: err says why
			}
			token = next
			v, keys := s.permit((off+j)%s.k, cc)
			if lk, _, err = l.attempt(ctx, v, s.key, keys, token, ttl); err == nil {
				return true
			}
		}
		return false
	})
	if err == nil {
		l.granted(ctx, lk, cc)
		return lk, nil
	}
	if qerr, ok := err.(*QuorumError); ok && qerr.Cause == nil {
		qerr.Cause = ctx.Err()
	}
	return nil, err
}
