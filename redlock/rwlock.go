package redlock

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/quorumlock/quorumlock/redlock/layout"
)

// RWMutex is a read-write lock: many readers at once, or one writer. Each
// reader's hold expires on its own. A writer that finds readers announces
// itself, and from then on new readers are refused until it got the lock or
// gave up (writer preference): a stream of readers cannot starve it.
//
// All state of one lock sits under one hash tag, so each master may be a
// Redis Cluster shard: "{key}:w" (the writer's token), "{key}:r" (a sorted
// set of readers by expiry) and "{key}:wq" (the waiting writer). When key
// has a hash tag of its own, it is the prefix as it is; a key without one
// that contains '}' is refused (ErrInvalid). Reader expiry uses each
// master's clock (Redis TIME), like key expiry. A reader's Extend (and
// renewal) never extends it beside a writer, nor brings back one that
// expired.
//
// With Config.Fencing each writer carries a fencing token (Lock.Fence),
// from the counter "{key}:fence", strictly greater than every earlier
// writer's; readers carry none (Fence is 0), since they may overlap.
type RWMutex struct {
	l   *Locker
	key string
}

// RWMutex returns the read-write lock named key.
func (l *Locker) RWMutex(key string) *RWMutex { return &RWMutex{l: l, key: key} }

func rwKeys(key string) []string {
	k := layout.RWKeys(key)
	return []string{k.Writer, k.Readers, k.Waiting}
}

var reader = &variant{
	kind:    KindRead,
	keys:    rwKeys,
	acquire: readAcquireScript,
	extend:  readExtendScript,
	check:   readCheckScript,
	release: readReleaseScript,
}

// rwFencedKeys are rwKeys and the fencing counter of a writer.
func rwFencedKeys(key string) []string {
	return append(rwKeys(key), fenceKey(key))
}

// writer is the write side for one waiting writer, whose id stays the same
// across its attempts so that its announcement carries over. A fenced
// writer's acquire also takes the fencing counter as a further key.
func writer(id string, fencing bool) *variant {
	keys := rwKeys
	if fencing {
		keys = rwFencedKeys
	}
	return &variant{
		kind:        KindWrite,
		keys:        keys,
		fenced:      fencing,
		acquire:     writeAcquireScript,
		acquireArgs: []any{id},
		extend:      extendScript, // on the writer key, keys[0]
		check:       checkScript,
		release:     writeReleaseScript,
		releaseArgs: []any{id},
		giveUp:      &writeWithdrawScript, // so that readers may go on
	}
}

// TryRLock makes one attempt to take a read hold for ttl. opts override
// the Locker's Config for this call (Option; readers carry no fencing
// token whatever WithFencing says).
func (m *RWMutex) TryRLock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return m.acquire(ctx, ttl, false, false, opts)
}

// RLock takes a read hold for ttl, waiting as Locker.Lock does. opts
// override the Locker's Config for this call (Option).
func (m *RWMutex) RLock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return m.acquire(ctx, ttl, false, true, opts)
}

// TryLock makes one attempt to take the write lock for ttl. opts override
// the Locker's Config for this call (Option).
func (m *RWMutex) TryLock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return m.acquire(ctx, ttl, true, false, opts)
}

// Lock takes the write lock for ttl, waiting as Locker.Lock does. opts
// override the Locker's Config for this call (Option).
func (m *RWMutex) Lock(ctx context.Context, ttl time.Duration, opts ...Option) (*Lock, error) {
	return m.acquire(ctx, ttl, true, true, opts)
}

func (m *RWMutex) acquire(ctx context.Context, ttl time.Duration, write, retry bool, opts []Option) (*Lock, error) {
	cc, err := m.l.callConfig(opts)
	if err != nil {
		return nil, err
	}
	v := reader
	switch {
	case write && cc.metadata != nil:
		v = recordedKind(writer(rand.Text(), cc.fencing), layout.Holder(m.l.prefix+m.key), cc.metadata)
	case write:
		v = writer(rand.Text(), cc.fencing)
	case cc.metadata != nil:
		return nil, invalid("WithMetadata: a read hold is shared and keeps no holder record; the write lock does")
	}
	return m.l.acquire(ctx, cc, v, m.key, ttl, retry)
}
