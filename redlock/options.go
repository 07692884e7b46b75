package redlock

import "crypto/rand"

// An Option sets, for the one call it is given to, what Config sets for
// every call of a Locker, so that one Locker serves a fenced lock beside a
// plain one: locker.Lock(ctx, "job", ttl, redlock.WithFencing(true)).
// Every call that acquires a lock takes them (Lock, TryLock, LockMulti,
// TryLockMulti, Do, Resume, and the Lock, TryLock, RLock, TryRLock,
// Acquire and TryAcquire of Reentrant, RWMutex, Fair and Semaphore);
// later options override earlier ones. A bad option fails the call with an
// error matching ErrInvalid, and nothing is sent.
type Option func(*callConfig)

// callConfig is what a call that acquires a lock runs with: the Locker's
// Config, overridden by the call's Options.
type callConfig struct {
	fencing     bool
	autoRenew   bool
	retry       RetryStrategy
	maxAttempts int                      // 0: until the context ends
	token       func(attempt int) string // nil: a random token per attempt
	metadata    map[string]string        // WithMetadata's; nil: no holder record
	bad         error                    // the first bad option's
}

// WithFencing makes the lock carry a fencing token (on), or not (off),
// whatever Config.Fencing says; see Config.Fencing. Every client of one
// key should agree on it: a fenced and a plain acquisition of one key
// exclude each other, but only fenced ones carry tokens. Readers of an
// RWMutex never carry one. Resume must be told the fencing its lock was
// acquired with.
func WithFencing(on bool) Option { return func(c *callConfig) { c.fencing = on } }

// WithAutoRenew keeps the lock renewed until Unlock (on), or not (off),
// whatever Config.AutoRenew says; see Config.AutoRenew. Locker.Do always
// renews.
func WithAutoRenew(on bool) Option { return func(c *callConfig) { c.autoRenew = on } }

// WithRetry spaces the call's attempts with r instead of Config.Retry. A
// nil r (or a typed nil) is refused.
func WithRetry(r RetryStrategy) Option {
	return func(c *callConfig) {
		if r == nil || isNil(r) {
			c.setBad(invalid("WithRetry: retry strategy %T is a nil value", r))
			return
		}
		c.retry = r
	}
}

// WithMaxAttempts makes a waiting call (Lock, Acquire, ...) give up after
// n attempts (for a semaphore, n passes over its permits), with the last
// attempt's error, instead of waiting until its context ends. n must be at
// least 1; a call that makes one attempt (TryLock, ...) ignores it.
func WithMaxAttempts(n int) Option {
	return func(c *callConfig) {
		if n < 1 {
			c.setBad(invalid("WithMaxAttempts(%d): at least one attempt", n))
			return
		}
		c.maxAttempts = n
	}
}

// MaxTokenLen is the longest token WithToken may give.
const MaxTokenLen = 256

// WithToken makes gen give the token of each attempt of the call (attempt
// 1, 2, ...), instead of a random one, so that a token can carry what the
// application knows (a request id: fmt.Sprintf("%s/%d", requestID,
// attempt)). Every attempt needs a token of its own, never used before by
// any acquisition of the key: a late release of an earlier attempt (a
// tombstone, package doc) refuses a later attempt with the same token, and
// two holders with one token would be one to the masters. A token that is
// empty, longer than MaxTokenLen or the same as the call's previous
// attempt's fails the call with ErrInvalid. The token is the lock's
// identity on the masters (Lock.Token, Resume); redlock unlock --force
// does not recognise a token it did not make as a lock's, and leaves the
// key alone.
func WithToken(gen func(attempt int) string) Option {
	return func(c *callConfig) {
		if gen == nil {
			c.setBad(invalid("WithToken: nil generator"))
			return
		}
		c.token = gen
	}
}

func (c *callConfig) setBad(err error) {
	if c.bad == nil {
		c.bad = err
	}
}

// callConfig returns what a call with opts runs with: the Locker's own
// (never to be changed) when there are none.
func (l *Locker) callConfig(opts []Option) (*callConfig, error) {
	if len(opts) == 0 {
		return &l.defaults, nil
	}
	c := l.defaults
	for _, o := range opts {
		if o == nil {
			return nil, invalid("nil Option")
		}
		o(&c)
	}
	if c.bad != nil {
		return nil, c.bad
	}
	return &c, nil
}

// newToken returns attempt's token: a random one, or the WithToken
// generator's, checked; prev is the call's previous attempt's.
func (c *callConfig) newToken(attempt int, prev string) (string, error) {
	if c.token == nil {
		return randomToken(), nil
	}
	t := c.token(attempt)
	switch {
	case t == "":
		return "", invalid("WithToken: an empty token for attempt %d", attempt)
	case len(t) > MaxTokenLen:
		return "", invalid("WithToken: a token of %d bytes for attempt %d: the longest is %d", len(t), attempt, MaxTokenLen)
	case t == prev:
		return "", invalid("WithToken: attempt %d reuses attempt %d's token %q: every attempt needs a token of its own", attempt, attempt-1, t)
	}
	return t, nil
}

// more reports whether a waiting call may make attempt n+1 after n.
func (c *callConfig) more(n int) bool { return c.maxAttempts == 0 || n < c.maxAttempts }

// randomToken is a fresh random token: 26 characters of base32, 128 bits.
func randomToken() string { return rand.Text() }
