package nodeutil

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// ErrClosed is the error of Lazy.Get after Close.
var ErrClosed = errors.New("nodeutil: closed")

// Lazy makes a value, typically a client, at its first use: a Node whose
// client library cannot make a client while the master is down (rueidis
// and valkey-go connect in NewClient) can then be built, and its service
// started, with a master down; its calls fail, as failed votes, until the
// client can be made. The zero value is not usable; NewLazy makes one.
// Its methods are safe for concurrent use.
type Lazy[T any] struct {
	create func() (T, error)
	wg     sync.WaitGroup // the attempt in progress

	mu      sync.Mutex
	v       T
	made    bool
	closed  bool
	closeV  func(T)       // set by Close: closes a value made after it
	attempt chan struct{} // closed when the attempt in progress ends; nil when none runs
	lastErr error         // the last attempt's error
}

// NewLazy returns a Lazy that makes its value with create, which must not
// block for ever: it is bounded by its own timeouts (a client's dial
// timeout), never by a caller's context.
func NewLazy[T any](create func() (T, error)) *Lazy[T] { return &Lazy[T]{create: create} }

// Get returns the value, made at the first Get. One attempt to make it
// runs at a time, on a goroutine of its own, so that a caller's short
// context does not cut a connection's set-up short; a caller waits for
// the attempt in progress or for ctx. A failed attempt's error goes to the
// callers that waited for it, and the next Get makes another attempt. An
// error of a ctx that ended stays matchable with errors.Is and carries the
// last attempt's error. After Close, Get fails with ErrClosed.
func (l *Lazy[T]) Get(ctx context.Context) (T, error) {
	var zero T
	l.mu.Lock()
	switch {
	case l.made:
		v := l.v
		l.mu.Unlock()
		return v, nil
	case l.closed:
		l.mu.Unlock()
		return zero, ErrClosed
	case l.attempt == nil:
		l.attempt = make(chan struct{})
		l.wg.Add(1)
		go l.try(l.attempt)
	}
	attempt := l.attempt
	l.mu.Unlock()

	select {
	case <-attempt:
	case <-ctx.Done():
		l.mu.Lock()
		lastErr := l.lastErr
		l.mu.Unlock()
		if lastErr != nil {
			return zero, fmt.Errorf("%w (last error: %w)", ctx.Err(), lastErr)
		}
		return zero, ctx.Err()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.made:
		return l.v, nil
	case l.closed:
		return zero, ErrClosed
	}
	return zero, l.lastErr
}

// try makes one attempt; attempt is its channel.
func (l *Lazy[T]) try(attempt chan struct{}) {
	defer l.wg.Done()
	v, err := l.create()
	l.mu.Lock()
	close(attempt)
	l.attempt = nil
	switch {
	case err != nil:
		l.lastErr = err
	case l.closed:
		closeV := l.closeV
		l.mu.Unlock()
		closeV(v) // made after Close
		return
	default:
		l.v, l.made, l.lastErr = v, true, nil
	}
	l.mu.Unlock()
}

// Close makes later Gets fail with ErrClosed, closes the value with
// closeV if it was made, and waits for an attempt in progress, whose value
// it closes too. It closes a value once; calls after the first do nothing.
func (l *Lazy[T]) Close(closeV func(T)) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	l.closed, l.closeV = true, closeV
	v, made := l.v, l.made
	l.made = false
	l.mu.Unlock()
	if made {
		closeV(v)
	}
	l.wg.Wait()
}
