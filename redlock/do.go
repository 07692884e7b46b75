package redlock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Do acquires key (as Lock does, waiting until ctx ends), keeps it renewed
// while fn runs, and unlocks it when fn returns. fn gets a context that is
// cancelled the moment the lock can no longer be guaranteed; context.Cause
// of it then matches ErrLockLost. Do returns fn's error; if fn returned nil
// but the lock was lost while it ran, an error matching ErrLockLost, since
// fn's work may have overlapped another holder's.
//
// opts override the Locker's Config for the acquisition (Option); Do
// renews whatever WithAutoRenew says.
func (l *Locker) Do(ctx context.Context, key string, ttl time.Duration, fn func(ctx context.Context) error, opts ...Option) error {
	if fn == nil {
		return invalid("nil function")
	}
	lk, err := l.Lock(ctx, key, ttl, opts...)
	if err != nil {
		return err
	}
	lk.startRenewal()
	lctx, cancel := lk.Context(ctx)
	defer cancel()
	ferr := fn(lctx)
	lost := lk.Err()
	uerr := lk.Unlock(context.WithoutCancel(ctx))
	switch {
	case ferr != nil:
		return ferr
	case lost != nil && errors.Is(lost, ErrLockLost):
		return fmt.Errorf("redlock: do %q: lock lost while fn ran: %w", key, lost)
	case uerr != nil:
		return uerr
	}
	return nil
}
