package quorum_test

import (
	"context"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/assist"
	"github.com/quorumlock/quorumlock/quorum"
)

const minute = time.Minute

// valueKey is a context key of the tests.
type valueKey struct{}

// reader is an assist.Reader that votes yes for node 0 when Async has it
// read, and records the context it read under.
type reader struct {
	done quorum.Done
	read int
	stop context.Context
}

func (r *reader) ReadReply(stop context.Context) {
	r.read++
	r.stop = stop
	r.done.Vote(0, yes)
}

// A fan-out of one takes the read of its call's reply, offered with its
// own node context while its calls start, and runs it on its goroutine
// before it waits, with its caller's context as the stop.
func TestFanOutOfOneTakesTheRead(t *testing.T) {
	ctx := context.WithValue(t.Context(), valueKey{}, "v")
	r := &reader{}
	res, err := quorum.Async(ctx, 1, quorum.Options{Need: 1, Timeout: minute}, func(nctx context.Context, i int, done quorum.Done) {
		r.done = done
		w := assist.From(nctx)
		if w == nil || !w.Offer(nctx, r) {
			t.Fatal("a fan-out of one refused the read of its call")
		}
		if w.Offer(nctx, &reader{}) {
			t.Error("a fan-out of one took a second read")
		}
		if nctx.Value(valueKey{}) != "v" {
			t.Error("the node context lost the caller's values")
		}
	})
	if err != nil || !res.OK() || r.read != 1 || r.stop != ctx {
		t.Fatalf("Async = %+v, %v; read %d times under %v; want one read under the caller's context and its yes", res, err, r.read, r.stop)
	}
}

// Only a fan-out of one takes a read, only while its calls start, and only
// for a call started with its own node context.
func TestFanOutRefusesOtherReads(t *testing.T) {
	opts := quorum.Options{Need: 1, Timeout: minute}
	var later assist.Waiter
	var laterCtx context.Context
	_, err := quorum.Async(t.Context(), 1, opts, func(nctx context.Context, i int, done quorum.Done) {
		if w := assist.From(nctx); w.Offer(context.WithoutCancel(nctx), &reader{}) {
			t.Error("took a read for a context derived from its node context")
		}
		later, laterCtx = assist.From(nctx), nctx
		done.Vote(i, yes)
	})
	if err != nil {
		t.Fatal(err)
	}
	if later.Offer(laterCtx, &reader{}) {
		t.Error("took a read after its calls had started")
	}
	_, err = quorum.Async(t.Context(), 2, quorum.Options{Need: 1, Timeout: minute}, func(nctx context.Context, i int, done quorum.Done) {
		if assist.From(nctx).Offer(nctx, &reader{}) {
			t.Error("a fan-out of two took a read")
		}
		done.Vote(i, yes)
	})
	if err != nil {
		t.Fatal(err)
	}
	if assist.From(t.Context()) != nil {
		t.Error("a context that no fan-out made carries a waiter")
	}
}
