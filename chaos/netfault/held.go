package netfault

import (
	"slices"
	"time"
)

// heldFor is how long a link remembers the bytes it held back (HeldAt).
const heldFor = 2 * time.Minute

// span is a time during which a link held back bytes read from one side
// and not yet written to the other; to is zero while it still does.
type span struct {
	from, to time.Time
}

// holding records that the link holds back, from read on, a chunk it read
// then, and returns the span for released to end.
func (l *Link) holding(read time.Time) *span {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := time.Now().Add(-heldFor)
	l.held = slices.DeleteFunc(l.held, func(s *span) bool { return !s.to.IsZero() && s.to.Before(old) })
	s := &span{from: read}
	l.held = append(l.held, s)
	return s
}

// released ends s, if any: its chunk is about to be written, or dropped.
func (l *Link) released(s *span) {
	if s == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	s.to = time.Now()
}

// HeldAt reports whether the link held back, at t, bytes that it had read
// from either side by then and wrote to the other only later (or not
// yet): a fault (Slow, Delay, Cut) had a command or its reply on its way
// at t. It remembers the last two minutes. A command that a client had
// not yet sent, for example one that waits for the late reply before it,
// is not the link's to know, but that reply is.
func (l *Link) HeldAt(t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.held, func(s *span) bool {
		return !s.from.After(t) && (s.to.IsZero() || s.to.After(t))
	})
}

// isCut reports whether the link is cut.
func (l *Link) isCut() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.cut
}
