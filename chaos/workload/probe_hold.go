package workload

import (
	"context"
	"sync"

	"github.com/quorumlock/quorumlock/redlock"
)

// A replyHold holds back the replies of the calls of one operation (those
// made with its context, replyHold.context) at the client's edge, past
// the transport: each call runs on its master at once and its reply comes
// back, but the caller gets it only once the probe releases the hold (or
// the call's context ends, as a Node must). The probe knows when each
// master has answered (answered), and whether another call went out
// meanwhile (other), and decides when the replies arrive by what it
// observed, not by a delay. The proxies' faults cannot do this: Cut holds
// the requests too, and a Delay's bytes keep their time whatever the
// probe does.
type replyHold struct {
	want     int           // the calls to hold: one per master
	released chan struct{} // closed by release
	answered chan struct{} // closed once want held calls got their reply
	other    chan struct{} // closed at the first other script call once armed

	releaseOnce sync.Once

	mu       sync.Mutex
	replies  int  // held calls that got their reply
	armed    bool // other calls are watched for
	sawOther bool // other is closed
}

// holdKey is the context key that marks the calls a replyHold holds.
type holdKey struct{}

func newReplyHold(want int) *replyHold {
	return &replyHold{want: want, released: make(chan struct{}),
		answered: make(chan struct{}), other: make(chan struct{})}
}

// context returns ctx marked so that the hold's nodes hold back the
// replies of the calls made with it (or a context derived from it).
func (h *replyHold) context(ctx context.Context) context.Context {
	return context.WithValue(ctx, holdKey{}, h)
}

// arm makes the next script call without the hold's context close other.
func (h *replyHold) arm() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.armed = true
}

// release hands the held replies, and those still to come, to their
// callers.
func (h *replyHold) release() { h.releaseOnce.Do(func() { close(h.released) }) }

// releaseUnlessOther releases the hold, unless another script call went
// out since arm; it reports whether it released it. Either way, the order
// is settled: a call that goes out later goes out after the release.
func (h *replyHold) releaseUnlessOther() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.sawOther {
		return false
	}
	h.release()
	return true
}

// replied counts the reply of a held call.
func (h *replyHold) replied() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.replies++; h.replies == h.want {
		close(h.answered)
	}
}

// sent notes a script call that the hold does not hold.
func (h *replyHold) sent() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.armed && !h.sawOther {
		h.sawOther = true
		close(h.other)
	}
}

// holdNode is a Node whose script calls made with its hold's context get
// their replies only once the hold is released. Its script calls all go
// through Eval (no EvalPrepared, no EvalAsync), so that it sees each.
type holdNode struct {
	redlock.Node
	hold *replyHold
}

func (n holdNode) Eval(ctx context.Context, hash, src string, keys []string, args ...any) (any, error) {
	if ctx.Value(holdKey{}) != n.hold {
		n.hold.sent()
		return n.Node.Eval(ctx, hash, src, keys, args...)
	}
	reply, err := n.Node.Eval(ctx, hash, src, keys, args...)
	n.hold.replied()
	select {
	case <-n.hold.released:
	case <-ctx.Done(): // the fan-out gave up on it: a reply that came too late
	}
	return reply, err
}

// Abilities are the wrapped Node's but for its script calls, which go
// through Eval.
func (n holdNode) Abilities() redlock.Abilities {
	a := redlock.AbilitiesOf(n.Node)
	a.EvalPrepared, a.EvalAsync = nil, nil
	return a
}
