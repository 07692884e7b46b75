package redlock

import (
	"context"
	"crypto/rand"
	"reflect"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/quorum"
)

// Node is one independent Redis master. *pool.Node satisfies it; so can an
// adapter for any other Redis client.
type Node interface {
	// Addr names the master; it must be unique within a Locker.
	Addr() string
	// Do sends one command. A nil reply must come back as nil, a status
	// reply as a string, an integer as int64, and a Redis error reply as
	// an error. It must return when ctx ends.
	Do(ctx context.Context, cmd string, args ...any) (any, error)
	// Eval runs the Lua script src, whose SHA1 hex digest is hash (EVALSHA
	// with an EVAL fallback), with the same reply conventions as Do.
	Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error)
}

// Locker acquires locks over a fixed set of masters. It is safe for
// concurrent use and keeps no state per acquisition.
type Locker struct {
	nodes []Node
	settings
}

// New returns a Locker over nodes. It checks the node list (at least one
// node, none nil, no two with the same Addr) and cfg; a bad one gives an
// error matching ErrInvalid. New sends nothing to Redis.
func New(nodes []Node, cfg Config) (*Locker, error) {
	if len(nodes) == 0 {
		return nil, invalid("no nodes")
	}
	seen := make(map[string]int, len(nodes))
	for i, n := range nodes {
		if isNil(n) {
			return nil, invalid("node %d is nil", i)
		}
		if j, dup := seen[n.Addr()]; dup {
			return nil, invalid("nodes %d and %d share the address %q", j, i, n.Addr())
		}
		seen[n.Addr()] = i
	}
	s, err := cfg.settings(len(nodes))
	if err != nil {
		return nil, err
	}
	return &Locker{nodes: append([]Node(nil), nodes...), settings: s}, nil
}

func isNil(n Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Interface, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// Quorum returns the number of masters that must grant a lock.
func (l *Locker) Quorum() int { return l.quorum }

// Nodes returns the number of masters.
func (l *Locker) Nodes() int { return len(l.nodes) }

// TryLock makes one attempt to acquire key for ttl. On failure the error
// matches ErrNotAcquired and is a *QuorumError.
func (l *Locker) TryLock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	if err := l.checkCall(ctx, key, ttl); err != nil {
		return nil, err
	}
	return l.attempt(ctx, key, ttl)
}

// Lock acquires key for ttl, retrying after a failed attempt (spaced by
// Config.Retry) until it succeeds or ctx ends. When ctx ends the error
// matches both ctx.Err() and ErrNotAcquired, and is a *QuorumError about the
// last attempt.
func (l *Locker) Lock(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	if err := l.checkCall(ctx, key, ttl); err != nil {
		return nil, err
	}
	var timer *time.Timer
	for attempt := 1; ; attempt++ {
		lk, err := l.attempt(ctx, key, ttl)
		if err == nil {
			return lk, nil
		}
		if ctx.Err() == nil {
			d := l.retry.Backoff(attempt)
			if timer == nil {
				timer = time.NewTimer(d)
				defer timer.Stop()
			} else {
				timer.Reset(d)
			}
			select {
			case <-timer.C:
				continue
			case <-ctx.Done():
			}
		}
		if qerr, ok := err.(*QuorumError); ok && qerr.Cause == nil {
			qerr.Cause = ctx.Err()
		}
		return nil, err
	}
}

func (l *Locker) checkCall(ctx context.Context, key string, ttl time.Duration) error {
	if ctx == nil {
		return invalid("nil context")
	}
	if key == "" {
		return invalid("empty key")
	}
	return l.checkTTL(ttl)
}

// attempt is one round of the Redlock algorithm with a fresh token.
func (l *Locker) attempt(ctx context.Context, key string, ttl time.Duration) (*Lock, error) {
	token := rand.Text()
	ms := ttl.Milliseconds()
	ttl = time.Duration(ms) * time.Millisecond // what the masters enforce

	// Each node's goroutine waits here after its SET returned, and
	// releases the node if the attempt failed: a release never overtakes
	// its node's SET.
	decided := make(chan struct{})
	var failed bool // written before decided is closed

	start := l.clock.Now()
	res, err := quorum.Do(ctx, len(l.nodes), quorum.Options{
		Need:    l.quorum,
		Timeout: l.nodeTimeout,
		Then: func(i int, v quorum.Vote) {
			<-decided
			if failed && (v.Yes || v.Err != nil) { // a failed SET may have landed
				l.release(ctx, i, key, token)
			}
		},
	}, func(ctx context.Context, i int) quorum.Vote {
		reply, err := l.nodes[i].Do(ctx, "SET", key, token, "NX", "PX", ms)
		return quorum.Vote{Yes: err == nil && reply != nil, Err: err}
	})
	validity := ttl - l.clock.Now().Sub(start) - clock.Drift(ttl, l.driftFactor)
	if err == nil && res.OK() && validity > 0 {
		close(decided)
		return newLock(l, key, token, start.Add(validity)), nil
	}
	failed = true
	close(decided)
	qerr := l.quorumError(opLock, key, res, err)
	qerr.Late = err == nil && res.OK() // a quorum, but no validity left
	return nil, qerr
}

// release deletes key on node i if it still holds token, under a context
// that ctx's cancellation cannot cut short.
func (l *Locker) release(ctx context.Context, i int, key, token string) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.nodeTimeout)
	defer cancel()
	releaseScript.eval(rctx, l.nodes[i], []string{key}, token)
}

// fanOut runs a yes/no script for key and token on every node, deciding at
// the quorum.
func (l *Locker) fanOut(ctx context.Context, s script, key string, args ...any) (*quorum.Result, error) {
	keys := []string{key}
	return quorum.Do(ctx, len(l.nodes), quorum.Options{Need: l.quorum, Timeout: l.nodeTimeout},
		func(ctx context.Context, i int) quorum.Vote {
			ok, err := s.evalFlag(ctx, l.nodes[i], keys, args...)
			return quorum.Vote{Yes: ok, Err: err}
		})
}

// quorumError describes a failed round; res is nil when ctx had ended before
// anything was sent.
func (l *Locker) quorumError(op, key string, res *quorum.Result, cause error) *QuorumError {
	if res == nil {
		return &QuorumError{Op: op, Key: key, Nodes: len(l.nodes), Quorum: l.quorum, Pending: len(l.nodes), Cause: cause}
	}
	return &QuorumError{
		Op: op, Key: key, Nodes: len(l.nodes), Quorum: l.quorum,
		Granted: res.Yes, Refused: res.No, Failed: res.Failed, Pending: res.Pending(),
		Cause:      cause,
		NodeErrors: res.Err(func(i int) string { return l.nodes[i].Addr() }),
	}
}
