package world

import (
	"container/heap"
	"time"
)

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
	at  time.Time
	seq uint64
	run func() // runs on the loop's goroutine, without the World's lock
}

type events []*event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// atLocked schedules f at t (not before now). Call with w.mu held.
func (w *World) atLocked(t time.Time, f func()) {
	w.seq++
	heap.Push(&w.events, &event{at: t, seq: w.seq, run: f})
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
		if d := time.Until(next.at); d > 0 {
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
		heap.Pop(&w.events)
		w.mu.Unlock()
		next.run()
		w.ran++
	}
}
