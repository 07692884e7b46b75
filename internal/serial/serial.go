// Package serial runs functions one after the other on a goroutine that
// exists only while there is work: the place for reports that must not run
// on the goroutine that produced them (a connection's reader) and must not
// cost a goroutine each (a burst of them when a master freezes).
package serial

import "sync"

// Queue runs the functions handed to Go in the order they came, on one
// goroutine at a time, which exits when the queue is empty. The zero
// value is ready to use.
type Queue struct {
	mu      sync.Mutex
	queue   []func()
	running bool
}

// Go queues f and starts the queue's goroutine unless it runs already.
func (q *Queue) Go(f func()) {
	q.mu.Lock()
	q.queue = append(q.queue, f)
	start := !q.running
	q.running = true
	q.mu.Unlock()
	if start {
		go q.run()
	}
}

// run runs the queued functions until there are none.
func (q *Queue) run() {
	for {
		q.mu.Lock()
		fs := q.queue
		q.queue = nil
		if len(fs) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		for _, f := range fs {
			f()
		}
	}
}
