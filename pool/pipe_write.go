package pool

import (
	"time"

	"github.com/quorumlock/quorumlock/internal/interleave"
)

// Writing. Whoever holds a pipe's writing (queue.writing) writes what is
// queued, one Flush per batch: one system call for what concurrent
// callers queued. A caller that finds nobody writing writes itself (flat
// combining: no wake-up of another goroutine) while the bytes in flight
// stay within directBytes, so few that they fit in the sockets' buffers
// and its write cannot block, even on a frozen master; past that, it hands
// the writing to the pipe's writer goroutine, whose writes may block, for
// the stall timeout at most. A batch is marked sent for the reader once
// it is written; until then it is its writer's, and a write that fails
// fails the pipe, and its commands, which may have gone out, get the
// error.
//
// Before a batch goes out on a connection with nothing in flight that gave
// no reply for quietBeforeCheck, the writer checks that the master has not
// closed it (idleChecker; a restart while idle is the common case): the
// batch is then unsent, and goes to the next connection.

// directBytes bounds the bytes in flight (written, reply not read) up to
// which a caller writes queued commands itself.
const directBytes = 16 << 10

// quietBeforeCheck is how long a connection on which no command is in
// flight must have gone without a reply before the writer checks it
// (idleChecker). The check is a system call per write on an idle
// connection: 9 of the 73 that an uncontended lock+unlock at N=5 cost the
// client and the masters together, measured with perf stat, and about 4%
// of the cycle's time on two CPUs. A connection that answered a
// moment ago is all but certainly open; if the master closed it since all
// the same, the command written to it fails as one whose reply was lost (a
// failed vote, never sent again), as when the master closes it just after
// the write. A master's idle timeout is 1s at least, and a restart takes
// far longer than this. (The check also finds bytes that nobody asked for;
// Redis sends none on a RESP2 command connection.)
const quietBeforeCheck = time.Millisecond

// processStart is what sinceStart counts from.
var processStart = time.Now()

// sinceStart is the monotonic time since processStart, never 0.
func sinceStart() int64 { return int64(time.Since(processStart)) | 1 }

// flush writes what is queued, batch after batch, for a caller who found
// nobody writing, until nothing is left or the bytes in flight pass
// directBytes. The caller's own command is in the first batch (the queue
// was empty when it queued it).
func (p *pipe) flush() {
	b, ok := p.q.take(directBytes, p.spare)
	if !ok || !p.write(b) {
		return
	}
	// An interleaving point (internal/interleave): nothing runs here but
	// in the chaos harness, which stretches it as a goroutine descheduled
	// right after its own write would be. The caller's command may
	// complete meanwhile, and its request serve another call: flush
	// never looks at it again.
	interleave.AfterOwnWrite()
	for {
		b, ok := p.q.take(directBytes, p.spare)
		if !ok || !p.write(b) {
			return
		}
	}
}

// writeLoop is the writer goroutine: it writes for the callers who
// handed the writing over, while many bytes are in flight (a slow or
// frozen master), and the commands queued during a dial. Its writes may
// block, for the stall timeout at most.
func (p *pipe) writeLoop() {
	for p.q.handedOver() {
		for {
			b, ok := p.q.take(-1, p.spare)
			if !ok {
				break
			}
			p.c.writeBy(time.Now().Add(p.stall))
			ok = p.write(b)
			p.c.writeBy(time.Time{})
			if !ok {
				break
			}
		}
	}
}

// write writes b, whose commands its writer holds, and marks them sent.
// It reports false when p failed: b's commands are completed then.
func (p *pipe) write(b batch) bool {
	if b.quiet {
		if err := p.c.checkIdle(); err != nil {
			// Nothing was written since the connection went idle.
			p.finishAll(b.reqs, notSentError{p.fail(err)})
			return false
		}
	}
	for _, r := range b.reqs {
		cmd, args := p.scripts.wire(r)
		if err := p.c.Send(cmd, args...); err != nil {
			return p.lost(b.reqs, err)
		}
	}
	if err := p.c.Flush(); err != nil {
		return p.lost(b.reqs, err)
	}
	if err := p.q.markSent(b.reqs); err != nil {
		p.finishAll(b.reqs, err) // written: they may run
		return false
	}
	clear(b.reqs)
	p.spare = b.reqs[:0]
	return true
}

// lost fails p after a write of reqs failed: they may have gone out, and
// get the error.
func (p *pipe) lost(reqs []*request, err error) bool {
	p.finishAll(reqs, p.failIO(err))
	return false
}
