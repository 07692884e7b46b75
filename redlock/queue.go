package redlock

import (
	"context"
	"sync"
)

// queues orders the Lock calls of one Locker that wait for the same key:
// first come, first served within the process. Only the head of a key's
// queue makes attempts; a new Lock call finds the queue non-empty and joins
// its tail instead of barging ahead; and an Unlock through the same Locker
// wakes the head at once. Across processes, waiters still compete (woken
// by release announcements); within one, no waiter starves and none waits
// behind a random draw.
type queues struct {
	mu   sync.Mutex
	keys map[string]*keyQueue
}

// keyQueue is one key's waiters, head first.
type keyQueue struct {
	waiters []*ticket
	kick    chan struct{} // buffered 1: a release seen in this process
}

// ticket is one waiting Lock call; turn is closed when it becomes the head.
type ticket struct {
	turn chan struct{}
}

// busy reports whether Lock calls wait for key in this process.
func (qs *queues) busy(key string) bool {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	return qs.keys[key] != nil
}

// join adds a ticket to key's queue and returns it with the queue's kick
// channel; the ticket's turn is closed already when the queue was empty.
func (qs *queues) join(key string) (*ticket, <-chan struct{}) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if qs.keys == nil {
		qs.keys = make(map[string]*keyQueue)
	}
	q := qs.keys[key]
	if q == nil {
		q = &keyQueue{kick: make(chan struct{}, 1)}
		qs.keys[key] = q
	}
	t := &ticket{turn: make(chan struct{})}
	q.waiters = append(q.waiters, t)
	if len(q.waiters) == 1 {
		close(t.turn)
	}
	return t, q.kick
}

// wait blocks until t is the head of its queue or ctx ends.
func (t *ticket) wait(ctx context.Context) error {
	select {
	case <-t.turn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// leave removes t from key's queue (it got the lock, or gave up) and, if it
// was the head, hands the turn to the next ticket.
func (qs *queues) leave(key string, t *ticket) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	q := qs.keys[key]
	if q == nil {
		return
	}
	for i, w := range q.waiters {
		if w != t {
			continue
		}
		q.waiters = append(q.waiters[:i], q.waiters[i+1:]...)
		if i == 0 && len(q.waiters) > 0 {
			close(q.waiters[0].turn)
		}
		break
	}
	if len(q.waiters) == 0 {
		delete(qs.keys, key)
	}
}

// released tells key's head, if any, that this process released the lock.
func (qs *queues) released(key string) {
	qs.mu.Lock()
	defer qs.mu.Unlock()
	if q := qs.keys[key]; q != nil {
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
}
