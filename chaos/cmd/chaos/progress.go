package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/chaos/scenario"
)

// progress shows on stderr what the suite is doing: on a terminal, one line
// rewritten in place; otherwise a line every few seconds.
type progress struct {
	w       io.Writer
	enabled bool
	tty     bool

	mu    sync.Mutex
	last  time.Time
	index int
}

func newProgress(w io.Writer, enabled bool) *progress {
	p := &progress{w: w, enabled: enabled}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) start(name string) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.index++
	p.last = time.Now()
	fmt.Fprintf(p.w, "%s[%d] %s: starting\n", p.clear(), p.index, name)
}

func (p *progress) update(s scenario.Progress) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	line := fmt.Sprintf("    %s %5.1fs  acquired %d of %d attempts, faults %d, stale writes rejected %d",
		s.Scenario, s.Elapsed.Seconds(), s.Acquired, s.Attempts, s.Faults, s.Rejected)
	switch {
	case p.tty:
		fmt.Fprint(p.w, p.clear()+line)
	case time.Since(p.last) >= 5*time.Second:
		p.last = time.Now()
		fmt.Fprintln(p.w, line)
	}
}

func (p *progress) done(r scenario.Result) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s    %s: %s in %v, %d acquisitions, %d overlaps: %s\n", p.clear(),
		r.Scenario, r.Verdict, r.Elapsed.Round(100*time.Millisecond), r.Acquisitions, r.Overlaps, r.Outcome)
}

// clear returns what erases the current terminal line.
func (p *progress) clear() string {
	if p.tty {
		return "\r\033[K"
	}
	return ""
}
