package goredis

import (
	"context"
	"net"
	"sync"

	"github.com/redis/go-redis/v9"
)

// The client's connection state, as its dial hook sees it: go-redis dials
// on a goroutine of its own, and retries a failed dial (five times, 100ms
// apart by default), so a call to a master whose address is wrong would
// otherwise only time out, and its vote read "no answer within the node
// timeout" instead of "connection refused". A call that needs a new
// connection therefore also ends at the first failed dial after it
// started, with that dial's error, and a call made while the master is
// known to refuse connections, with no connection left in the client's
// pool, ends at once with the last one; in both cases the command itself
// goes on in go-redis, which redials, as a command whose caller's context
// ended does. A call that ends with its context carries the last dial
// error too.

// connState is a Node's view of its client's dials. It is a go-redis Hook
// that only watches dials.
type connState struct {
	mu        sync.Mutex
	connected bool  // the last dial succeeded
	lastErr   error // the last failed dial's error; kept until a dial succeeds
	// failed ends, with the dial's error as its cause, at the next failed
	// dial; a new one then waits for the one after.
	failed context.Context
	fail   context.CancelCauseFunc
}

var _ redis.Hook = (*connState)(nil)

func newConnState() *connState {
	s := &connState{}
	s.failed, s.fail = context.WithCancelCause(context.Background())
	return s
}

// DialHook records the outcome of every dial of the client.
func (s *connState) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		s.record(err)
		return c, err
	}
}

// ProcessHook leaves commands alone.
func (s *connState) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

// ProcessPipelineHook leaves pipelines alone.
func (s *connState) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (s *connState) record(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.connected, s.lastErr = true, nil
		return
	}
	s.connected, s.lastErr = false, err
	s.fail(err)
	s.failed, s.fail = context.WithCancelCause(context.Background())
}

// watch returns nil for a call on a client whose last dial succeeded (the
// common case, which costs nothing more); otherwise a context that ends at
// the next failed dial, or has ended with the last dial's error when
// nothing is connected.
func (s *connState) watch(c redis.UniversalClient) context.Context {
	s.mu.Lock()
	connected, lastErr, failed := s.connected, s.lastErr, s.failed
	s.mu.Unlock()
	switch {
	case connected:
		return nil
	case lastErr != nil && c.PoolStats().TotalConns == 0:
		ended, end := context.WithCancelCause(context.Background())
		end(lastErr)
		return ended
	}
	return failed
}

// err returns the last failed dial's error, nil once a dial succeeded.
func (s *connState) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}
