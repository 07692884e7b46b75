package redlock_test

import (
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Log what a Locker does with log/slog: successes at Debug, failures at
// Warn, losses at Error. The events here are told by hand to show the
// records; a Locker with Config.Observer set tells them itself.
func ExampleSlogObserver() {
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		Level: slog.LevelDebug,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.Attr{} // drop the time, for a stable output
			}
			return a
		},
	}))
	obs := redlock.SlogObserver(logger)
	cfg := redlock.Config{Observer: obs} // pass to redlock.New
	_ = cfg

	obs.Acquire(redlock.AcquireEvent{Key: "invoice:42", Kind: redlock.KindLock, Wait: 3 * time.Millisecond, Attempts: 1})
	obs.Release(redlock.ReleaseEvent{Key: "invoice:42", Kind: redlock.KindLock, Held: 120 * time.Millisecond})
	// A master that fails is told once (a Locker tells its NodeState
	// when it starts failing and when it answers again); each failed call
	// only at Debug.
	states := obs.(redlock.NodeStateObserver)
	states.NodeState(redlock.NodeStateEvent{Addr: "redis-c:6379", Err: errors.New("i/o timeout")})
	obs.NodeError(redlock.NodeErrorEvent{Op: "lock", Addr: "redis-c:6379", Err: errors.New("i/o timeout")})
	states.NodeState(redlock.NodeStateEvent{Addr: "redis-c:6379", Up: true})
	obs.Lost(redlock.LostEvent{Key: "report:daily", Kind: redlock.KindFenced, Cause: redlock.ErrLockLost})
	// Output:
	// level=DEBUG msg="redlock: acquire" key=invoice:42 kind=lock wait=3ms attempts=1
	// level=DEBUG msg="redlock: release" key=invoice:42 kind=lock held=120ms
	// level=WARN msg="redlock: master failing" addr=redis-c:6379 err="i/o timeout"
	// level=DEBUG msg="redlock: node error" op=lock addr=redis-c:6379 err="i/o timeout"
	// level=INFO msg="redlock: master answers again" addr=redis-c:6379
	// level=ERROR msg="redlock: lost" key=report:daily kind=fenced err="redlock: lock lost"
}
