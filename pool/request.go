package pool

import (
	"context"
	"sync"
)

// A request is one command on its way through a pipelined connection,
// from the call that made it (call.go) to its completion. Requests are
// recycled once their caller took the reply (layers.recycle); one whose
// waiting caller gave up is left to the collector, since a connection may
// still hold it. Nothing may touch a request once it completed: an
// asynchronous one goes back to the pool before its callback runs, and
// may already carry another caller's command.
type request struct {
	cmd  string
	args []any
	src  string          // with EVALSHA: the script, sent as EVAL after NOSCRIPT
	ctx  context.Context // bounds waiting for a dial, and any resend
	// fallback: the EVAL after a NOSCRIPT, which goes out whatever ctx
	// does (see mux.finish); set before it is submitted again.
	fallback bool
	tries    int   // resends so far
	size     int64 // about its bytes on the wire (see sizeOf)
	// done, if set, completes the request (an asynchronous call);
	// otherwise reply and err are set and ch gets one send.
	done  Completion
	reply any
	err   error
	ch    chan struct{} // buffered 1
}

// requests recycles requests. A test may replace it with a pool of its own.
var requests = &sync.Pool{New: func() any { return &request{ch: make(chan struct{}, 1)} }}

func newRequest(ctx context.Context, cmd string, args []any, src string, done Completion) *request {
	var r *request
	if layers.recycle {
		r = requests.Get().(*request)
	} else {
		r = &request{ch: make(chan struct{}, 1)}
	}
	r.ctx, r.cmd, r.args, r.src, r.done = ctx, cmd, args, src, done
	r.size = sizeOf(cmd, args)
	return r
}

// sizeOf is about the bytes of a command on the wire: its strings and byte
// slices, and a little for everything else and the framing.
func sizeOf(cmd string, args []any) int64 {
	n := int64(len(cmd)) + 16
	for _, a := range args {
		switch a := a.(type) {
		case string:
			n += int64(len(a)) + 16
		case []byte:
			n += int64(len(a)) + 16
		default:
			n += 32
		}
	}
	return n
}

// ended is r's context's error, while r's context bounds its sending: not
// for the EVAL after a NOSCRIPT, which goes out whatever the caller does.
func (r *request) ended() error {
	if r.fallback {
		return nil
	}
	return r.ctx.Err()
}

// recycle returns a waited-for r's result and puts r back for reuse.
func (r *request) recycle() (any, error) {
	reply, err := r.reply, r.err
	r.free()
	return reply, err
}

// free clears r and puts it back for reuse.
func (r *request) free() {
	*r = request{ch: r.ch}
	if layers.recycle {
		requests.Put(r)
	}
}
