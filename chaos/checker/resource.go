package checker

import (
	"sync"
	"time"
)

// Write is one write a Resource received.
type Write struct {
	Client   int
	Token    int64
	At       time.Duration
	Accepted bool
}

// Resource is a fenced resource, such as a storage service that checks
// fencing tokens: it accepts a write only when its token is at least the
// highest token it has seen (so one holder may write many times), and
// rejects (and counts) the others as stale. It is safe for concurrent use.
type Resource struct {
	mu       sync.Mutex
	highest  int64
	writes   []Write
	rejected int
}

// Write offers a write with token at offset at, and reports whether it was
// accepted.
func (r *Resource) Write(client int, token int64, at time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := token >= r.highest
	if ok {
		r.highest = token
	} else {
		r.rejected++
	}
	r.writes = append(r.writes, Write{Client: client, Token: token, At: at, Accepted: ok})
	return ok
}

// Rejected is the number of stale writes rejected.
func (r *Resource) Rejected() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rejected
}

// Counts returns the number of writes offered and of stale ones rejected.
func (r *Resource) Counts() (writes, rejected int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.writes), r.rejected
}

// Writes returns a copy of every write offered, in arrival order.
func (r *Resource) Writes() []Write {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Write(nil), r.writes...)
}
