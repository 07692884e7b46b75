package pool

import "sync"

// The queue between a pipe's writers and its reader (rueidis's ring.go is
// the model). Callers put commands; one writer at a time takes them in
// batches, writes them and marks them sent; the reader holds the oldest
// command sent, reads its reply and pops it: Redis answers a connection's
// commands in order, so the n-th reply belongs to the n-th command sent.
// One mutex guards it all, and with it who owns each command on the
// connection, which is what makes a failure complete every command
// exactly once:
//
//   - a command queued and not taken, or sent and not held, belongs to
//     the queue, and fail hands it to whoever failed the connection;
//   - a batch that a writer took belongs to that writer until it marked
//     the batch sent;
//   - the oldest command sent, while the reader goroutine holds it to
//     read its reply, belongs to the reader.
//
// Nothing is queued on a failed queue: put reports the failure, and the
// caller takes its command to the next connection.
type queue struct {
	mu       sync.Mutex
	err      error      // why the connection failed; nil while it works
	unsent   []*request // queued, not taken yet; empty while nobody writes
	writing  bool       // a writer holds the writing (a caller, or the writer goroutine)
	sent     sentList   // marked sent, reply not read yet, oldest first
	bytes    int64      // the sizes of sent's commands
	held     bool       // the reader holds sent's oldest
	answered int64      // when the last reply was read (sinceStart), 0 before
	waiting  bool       // the reader waits in next for toReader

	toReader chan struct{} // buffered 1; fail closes it
	toWriter chan struct{} // buffered 1: the writing goes to the writer goroutine; fail closes it
}

func (q *queue) init() {
	q.toReader = make(chan struct{}, 1)
	q.toWriter = make(chan struct{}, 1)
}

// put queues r. write reports that nobody was writing: the caller holds
// the writing now, and r is the first command queued. busy reports two
// commands in flight or more: one says nothing of other callers (a
// caller alone may have its last call to a slow master still in flight),
// two say that others use the connection too. A queue holding muxQueue
// commands refuses r with errBusy; a failed one with a notSentError.
func (q *queue) put(r *request) (write, busy bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.err != nil:
		return false, false, notSentError{q.err}
	case len(q.unsent)+q.sent.len() >= muxQueue:
		return false, false, errBusy
	}
	q.unsent = append(q.unsent, r)
	if q.writing {
		return false, false, nil
	}
	q.writing = true
	return true, q.sent.len() > 1, nil
}

// batch is what a writer took.
type batch struct {
	reqs  []*request
	quiet bool // nothing in flight, and no reply for quietBeforeCheck: check first
}

// take takes the next batch for the writer, who holds the writing, into
// buf: all that is queued, or with room >= 0 as much as keeps the bytes
// in flight within room. It reports false, and the writer has given the
// writing up, when nothing is queued or the queue failed; and also when
// the first command does not fit in room: the writing then goes to the
// writer goroutine.
func (q *queue) take(room int64, buf []*request) (b batch, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil || len(q.unsent) == 0 {
		q.writing = false
		return batch{}, false
	}
	if room < 0 {
		b.reqs, q.unsent = q.unsent, buf
	} else {
		room -= q.bytes
		n := 0
		for n < len(q.unsent) && room >= q.unsent[n].size {
			room -= q.unsent[n].size
			n++
		}
		if n == 0 {
			q.kickWriter()
			return batch{}, false
		}
		b.reqs = append(buf, q.unsent[:n]...)
		rest := copy(q.unsent, q.unsent[n:])
		clear(q.unsent[rest:])
		q.unsent = q.unsent[:rest]
	}
	b.quiet = q.sent.len() == 0 && (q.answered == 0 || sinceStart()-q.answered >= int64(quietBeforeCheck))
	return b, true
}

// handOff hands the writing, which the caller holds, to the writer
// goroutine.
func (q *queue) handOff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.kickWriter()
	} else {
		q.writing = false
	}
}

// kickWriter wakes the writer goroutine, which holds the writing now.
// There is one hand-over at a time: only the holder of the writing hands
// it over, and the writer goroutine takes the hand-over before it writes.
func (q *queue) kickWriter() {
	select {
	case q.toWriter <- struct{}{}:
	default:
	}
}

// handedOver waits until the writing is handed to the writer goroutine;
// it reports false once the queue failed.
func (q *queue) handedOver() bool {
	_, ok := <-q.toWriter
	return ok
}

// markSent marks reqs, written, sent, in order, for the reader. It returns
// the queue's error when it failed meanwhile: reqs are then their
// writer's to complete.
func (q *queue) markSent(reqs []*request) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return q.err
	}
	for _, r := range reqs {
		q.sent.push(r)
		q.bytes += r.size
	}
	if q.waiting {
		q.waiting = false
		select {
		case q.toReader <- struct{}{}:
		default: // one wake-up is enough
		}
	}
	return nil
}

// next holds the oldest command sent for the reader goroutine, once there
// is one; it returns the queue's error once it failed.
func (q *queue) next() (*request, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.err == nil && q.sent.len() == 0 {
		q.waiting = true
		q.mu.Unlock()
		<-q.toReader
		q.mu.Lock()
	}
	if q.err != nil {
		return nil, q.err
	}
	q.held = true
	return q.sent.oldest(), nil
}

// done pops r, the oldest command sent, whose reply the reader read.
func (q *queue) done(r *request) {
	now := sinceStart()
	q.mu.Lock()
	defer q.mu.Unlock()
	q.sent.pop()
	q.bytes -= r.size
	q.held = false
	q.answered = now
}

// fail marks the queue failed for err, unless it failed already (first is
// false then), and takes from it what it owns: the commands never taken
// (unsent) and those sent that nobody holds. The writer and reader
// goroutines end. cause is the error the queue failed with, the first.
func (q *queue) fail(err error) (unsent, sent []*request, first bool, cause error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err != nil {
		return nil, nil, false, q.err
	}
	q.err = err
	unsent, q.unsent = q.unsent, nil
	keep := 0
	if q.held {
		keep = 1
	}
	sent = q.sent.drain(keep)
	close(q.toReader)
	close(q.toWriter)
	return unsent, sent, true, err
}

// sentList is a first-in first-out list of requests.
type sentList struct {
	s    []*request // s[head:] are in the list
	head int
}

func (l *sentList) len() int { return len(l.s) - l.head }

func (l *sentList) oldest() *request { return l.s[l.head] }

func (l *sentList) push(r *request) {
	if len(l.s) == cap(l.s) && l.head >= len(l.s)/2 {
		// Reuse the room popped, when it is half of it at least, so that
		// a list that never empties does not grow for ever, and moving
		// what is left costs less than the pushes that made the room.
		n := copy(l.s, l.s[l.head:])
		clear(l.s[n:])
		l.s, l.head = l.s[:n], 0
	}
	l.s = append(l.s, r)
}

func (l *sentList) pop() {
	l.s[l.head] = nil
	l.head++
	if l.head == len(l.s) {
		l.s, l.head = l.s[:0], 0
	}
}

// drain removes all but the first keep requests and returns them.
func (l *sentList) drain(keep int) []*request {
	out := append([]*request(nil), l.s[l.head+keep:]...)
	clear(l.s[l.head+keep:])
	l.s = l.s[:l.head+keep]
	return out
}
