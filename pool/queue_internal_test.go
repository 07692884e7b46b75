package pool

import (
	"errors"
	"slices"
	"testing"
)

func newQueue() *queue {
	q := &queue{}
	q.init()
	return q
}

func cmds(names ...string) []*request {
	reqs := make([]*request, len(names))
	for i, name := range names {
		reqs[i] = &request{cmd: name, size: sizeOf(name, nil)}
	}
	return reqs
}

func names(reqs []*request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.cmd
	}
	return out
}

// The first caller to queue on a queue nobody writes becomes its writer,
// and takes its own command first; the others only queue, and the writer
// takes theirs in the next batch, in order.
func TestQueueWriterTakesInOrder(t *testing.T) {
	q := newQueue()
	reqs := cmds("a", "b", "c")
	for i, r := range reqs {
		write, busy, err := q.put(r)
		if err != nil || write != (i == 0) || busy {
			t.Fatalf("put %s: write %v, busy %v, %v; want the first to write", r.cmd, write, busy, err)
		}
	}
	b, ok := q.take(-1, nil)
	if !ok || !b.quiet || !slices.Equal(names(b.reqs), []string{"a", "b", "c"}) {
		t.Fatalf("take = %v quiet %v, %v; want a b c on a quiet connection", names(b.reqs), b.quiet, ok)
	}
	if err := q.markSent(b.reqs); err != nil {
		t.Fatal(err)
	}
	if _, ok := q.take(-1, nil); ok {
		t.Fatal("a second take found commands; want the writing given up")
	}
	for _, want := range []string{"a", "b", "c"} {
		r, err := q.next()
		if err != nil || r.cmd != want {
			t.Fatalf("next = %v, %v; want %s", r, err, want)
		}
		q.done(r)
	}
	if b, _ := q.take(-1, nil); b.quiet {
		t.Fatal("a connection that answered just now counts as quiet")
	}
}

// A connection is busy (the writer yields first) with two commands in
// flight, not one: a caller alone may leave one behind on a slow master.
func TestQueueBusy(t *testing.T) {
	q := newQueue()
	for i, r := range cmds("a", "b", "c") {
		write, busy, err := q.put(r)
		if err != nil || !write || busy != (i >= 2) {
			t.Fatalf("put with %d in flight: write %v, busy %v, %v; want to write, busy with two", i, write, busy, err)
		}
		b, _ := q.take(-1, nil)
		q.markSent(b.reqs)
		q.take(-1, nil)
	}
}

// A caller writes only as much as keeps the bytes in flight within its
// room; what does not fit goes to the writer goroutine.
func TestQueueTakeWithinRoom(t *testing.T) {
	q := newQueue()
	reqs := cmds("a", "b", "c")
	for _, r := range reqs {
		q.put(r)
	}
	room := reqs[0].size + reqs[1].size
	b, ok := q.take(room, nil)
	if !ok || !slices.Equal(names(b.reqs), []string{"a", "b"}) {
		t.Fatalf("take(%d) = %v, %v; want a b", room, names(b.reqs), ok)
	}
	q.markSent(b.reqs)
	if _, ok := q.take(room, nil); ok {
		t.Fatal("took c with no room left")
	}
	select {
	case <-q.toWriter:
	default:
		t.Fatal("the writing was not handed to the writer goroutine")
	}
	if b, ok := q.take(-1, nil); !ok || !slices.Equal(names(b.reqs), []string{"c"}) {
		t.Fatalf("the writer goroutine took %v, %v; want c", names(b.reqs), ok)
	}
}

// fail takes what the queue owns, the unsent commands and the sent ones
// nobody holds, once; the held one stays its holder's, and nothing is
// queued on a failed queue.
func TestQueueFailTakesWhatItOwns(t *testing.T) {
	q := newQueue()
	for _, r := range cmds("a", "b") {
		q.put(r)
	}
	b, _ := q.take(-1, nil)
	q.markSent(b.reqs)
	q.take(-1, nil)
	held, err := q.next()
	if err != nil || held.cmd != "a" {
		t.Fatalf("next = %v, %v", held, err)
	}
	for _, r := range cmds("c", "d") {
		q.put(r)
	}
	cause := errors.New("broken")
	unsent, sent, first, got := q.fail(cause)
	if !first || got != cause || !slices.Equal(names(unsent), []string{"c", "d"}) || !slices.Equal(names(sent), []string{"b"}) {
		t.Fatalf("fail = unsent %v, sent %v, first %v, %v; want c d, b", names(unsent), names(sent), first, got)
	}
	if unsent, sent, first, got := q.fail(errors.New("again")); first || got != cause || unsent != nil || sent != nil {
		t.Fatalf("second fail = %v %v %v %v; want the first cause and nothing", unsent, sent, first, got)
	}
	if _, _, err := q.put(&request{cmd: "e"}); !errors.As(err, new(notSentError)) {
		t.Fatalf("put on a failed queue: %v, want a notSentError", err)
	}
	if err := q.markSent(cmds("f")); err != cause {
		t.Fatalf("markSent on a failed queue: %v, want its cause", err)
	}
	if _, err := q.next(); err != cause {
		t.Fatalf("next on a failed queue: %v, want its cause", err)
	}
	if q.handedOver() {
		t.Fatal("the writer goroutine was not told of the failure")
	}
}

// The list of commands in flight keeps its order through growth and
// reuse of its room, and its room stays within a few times what is in it
// (room popped is reused before half the list is, and append at most
// doubles).
func TestSentListOrder(t *testing.T) {
	var l sentList
	pushed, popped := 0, 0
	for round := range 200 {
		for range round%7 + 1 {
			l.push(&request{tries: pushed})
			pushed++
		}
		for range round % 5 {
			if l.len() == 0 {
				break
			}
			if got := l.oldest().tries; got != popped {
				t.Fatalf("popped %d, want %d", got, popped)
			}
			l.pop()
			popped++
		}
		if cap(l.s) > 5*max(l.len(), 16) {
			t.Fatalf("%d in the list take %d of room", l.len(), cap(l.s))
		}
	}
	rest := l.drain(1)
	if l.len() != 1 || len(rest) != pushed-popped-1 || rest[0].tries != popped+1 {
		t.Fatalf("drain(1) left %d, took %d starting at %d", l.len(), len(rest), rest[0].tries)
	}
}
