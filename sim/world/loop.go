package world

import "time"

// The event loop. Everything that happens on the simulated network and
// masters is an event at a time: a command reaching a master, a reply
// reaching a client, a fault, an fsync. One goroutine (run) takes the
// events in order of time (then of scheduling) and runs them; inside a
// testing/synctest bubble it sleeps on the bubble's clock between them, so
// that virtual time jumps from one event to the next once every goroutine
// of the clients is blocked. Masters are touched by that goroutine only
// (and by the checks' direct reads, under the World's lock), so a master
// runs one command at a time, in the order the events say.

// event is one scheduled happening.
type event struct {
	at  int64 // the time, in ns since the Unix epoch
	seq uint64
	run func() // runs on the loop's goroutine, without the World's lock
}

// events is a binary min-heap of events, by time then by scheduling: the
// loop's hottest structure, so it is typed rather than container/heap's.
type events []*event

func (h events) less(i, j int) bool {
	return h[i].at < h[j].at || h[i].at == h[j].at && h[i].seq < h[j].seq
}

func (h *events) push(e *event) {
	*h = append(*h, e)
	q := *h
	for i := len(q) - 1; i > 0; {
		up := (i - 1) / 2
		if !q.less(i, up) {
			break
		}
		q[i], q[up] = q[up], q[i]
		i = up
	}
}

func (h *events) pop() *event {
	q := *h
	top, n := q[0], len(q)-1
	q[0], q[n] = q[n], nil
	q = q[:n]
	for i := 0; ; {
		least, l, r := i, 2*i+1, 2*i+2
		if l < n && q.less(l, least) {
			least = l
		}
		if r < n && q.less(r, least) {
			least = r
		}
		if least == i {
			break
		}
		q[i], q[least] = q[least], q[i]
		i = least
	}
	*h = q
	return top
}

// atLocked schedules f at t (not before now). Call with w.mu held.
func (w *World) atLocked(t time.Time, f func()) {
	w.seq++
	w.events.push(&event{at: t.UnixNano(), seq: w.seq, run: f})
	if len(w.events) == 1 || w.events[0].seq == w.seq {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// At schedules f at t.
func (w *World) At(t time.Time, f func()) {
	w.mu.Lock()
	w.atLocked(t, f)
	w.mu.Unlock()
}

// loop runs the events until Stop.
func (w *World) loop() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		w.mu.Lock()
		if w.stopped {
			w.mu.Unlock()
			return
		}
		if len(w.events) == 0 {
			w.mu.Unlock()
			select {
			case <-w.wake:
			case <-w.stop:
			}
			continue
		}
		next := w.events[0]
		if d := time.Duration(next.at - time.Now().UnixNano()); d > 0 {
			w.mu.Unlock()
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-w.wake:
				timer.Stop()
			case <-w.stop:
				timer.Stop()
			}
			continue
		}
		w.events.pop()
		w.mu.Unlock()
		next.run()
		w.ran++
	}
}
