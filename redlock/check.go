package redlock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// MasterState is one master's answer to Locker.Check.
type MasterState struct {
	Addr    string        // the master's Node.Addr
	Latency time.Duration // how long its PING took
	Err     error         // nil when it answered PING within the node timeout
}

// Check is a readiness check: it PINGs every master at once, each bounded
// by the node timeout, and returns each one's state, in the order of the
// nodes. The error is nil when at least a quorum answered; otherwise it
// matches ErrUnavailable and names the masters that did not. ctx ending
// first returns its error. Check takes no lock and writes nothing.
func (l *Locker) Check(ctx context.Context) ([]MasterState, error) {
	if err := l.checkMade(); err != nil {
		return nil, err
	}
	if ctx == nil {
		return nil, invalid("nil context")
	}
	states := make([]MasterState, len(l.masters))
	var wg sync.WaitGroup
	for i, m := range l.masters {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, l.nodeTimeout)
			defer cancel()
			start := l.clock.Now()
			_, err := m.node.Do(pctx, "PING")
			states[i] = MasterState{Addr: m.addr(), Latency: l.clock.Now().Sub(start), Err: err}
			l.noteState(ctx, i, err)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return states, err
	}
	answered, failed := 0, ""
	for _, s := range states {
		if s.Err == nil {
			answered++
			continue
		}
		if failed != "" {
			failed += "; "
		}
		failed += s.Addr + ": " + s.Err.Error()
	}
	if answered < l.quorum {
		return states, fmt.Errorf("redlock: check: %d of %d masters answered, quorum %d (%s): %w", answered, len(l.masters), l.quorum, failed, ErrUnavailable)
	}
	return states, nil
}
