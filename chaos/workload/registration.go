package workload

import (
	"context"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// A fair waiter's place in line is fixed when it is registered on a quorum
// of the masters: any acquire called later draws a greater ticket (see
// redlock.Fair). The harness learns that moment from the masters, through
// the queue's documented layout ("{key}:fair:queue", "{key}:fair:expiry"):
// the starts of a key's fair calls are ordered by a gate, and a call holds
// the gate until a waiter that was registered nowhere before it started
// shows up live on a quorum of the masters (or until the call returns).
// That waiter is the call's own: the calls that started before were
// registered already, or returned and withdrew theirs. The call's history
// then gets a Registered event, which checker.OutOfOrder orders the others
// by, and the waiter's id, whose registration must be gone once the call
// gave up or unlocked.

// modeFair is the target mode of a fair waiter's registration: member is
// the waiter's id, key the lock key.
const modeFair = "fair-waiter"

func fairQueue(key string) string  { return "{" + key + "}:fair:queue" }
func fairExpiry(key string) string { return "{" + key + "}:fair:expiry" }

// liveRegistration returns how many milliseconds the registration of
// waiter ARGV[1] has left on this master, or -1 when it has none that
// lives. KEYS[1] queue, KEYS[2] expiries.
var liveRegistration = redis.NewScript(2, `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) or not exp or tonumber(exp) <= now then
  return -1
end
return tonumber(exp) - now
`)

// liveWaiters returns the waiters whose registration lives on this
// master. KEYS[1] queue, KEYS[2] expiries.
var liveWaiters = redis.NewScript(2, `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf')) do
  if redis.call('ZSCORE', KEYS[1], id) then
    out[#out + 1] = id
  end
end
return out
`)

// each runs fn with a connection to every master at once, each within
// ReadTimeout, and returns what each answered: the zero value where fn
// failed (the master did not answer in time).
func each[T any](ctx context.Context, m *masters, fn func(ctx context.Context, c redis.Conn) (T, error)) []T {
	out := make([]T, len(m.pools))
	var wg sync.WaitGroup
	for i := range m.pools {
		wg.Go(func() {
			m.on(ctx, i, func(ctx context.Context, c redis.Conn) error {
				v, err := fn(ctx, c)
				if err == nil {
					out[i] = v
				}
				return err
			})
		})
	}
	wg.Wait()
	return out
}

// readWith asks every master, at once, how many milliseconds script (which
// answers -1 for "not held") says are left of what keysAndArgs name; a
// master that does not answer is unknown.
func (m *masters) readWith(ctx context.Context, script *redis.Script, keysAndArgs ...any) []reading {
	return each(ctx, m, func(ctx context.Context, c redis.Conn) (reading, error) {
		ms, err := redis.Int64(script.DoContext(ctx, c, keysAndArgs...))
		if err != nil {
			return reading{}, err
		}
		return reading{known: true, held: ms >= 0, left: time.Duration(ms) * time.Millisecond, at: time.Now()}, nil
	})
}

// waiters returns, per master, the waiters of the fair lock key that are
// registered there and live; nil for a master that did not answer.
func (m *masters) waiters(ctx context.Context, key string) []map[string]bool {
	return each(ctx, m, func(ctx context.Context, c redis.Conn) (map[string]bool, error) {
		ids, err := redis.Strings(liveWaiters.DoContext(ctx, c, fairQueue(key), fairExpiry(key)))
		if err != nil {
			return nil, err
		}
		ws := map[string]bool{}
		for _, id := range ids {
			ws[id] = true
		}
		return ws, nil
	})
}

// fairResult is the outcome of a fair acquire call.
type fairResult struct {
	h      *Held // the hold, when granted
	err    error // else the call's error
	start  time.Time
	waiter string // the call's waiter, "" when it was not seen registered
}

// fairHooks are told how a fair call goes, each when set.
type fairHooks struct {
	started func(time.Time) // the call starts, at the time it is recorded with
	placed  func()          // its place in line is known: seen registered, or returned
}

// fairCall makes the fair acquire call lock on the lock named name,
// recorded as ev, through the key's gate: the call's waiter is "" when the
// call returned before it was seen registered on a quorum. bg bounds the
// harness's reads.
func (c *Client) fairCall(bg context.Context, name string, ev checker.Event, lock func() (*redlock.Lock, error), hooks fairHooks) fairResult {
	e := c.env
	key := e.Key(name)
	g := c.sh.gate(key)
	g.Lock()
	known := map[string]bool{}
	for _, ws := range e.direct.waiters(bg, key) {
		for w := range ws {
			known[w] = true
		}
	}
	type result struct {
		h   *Held
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	if hooks.started != nil {
		hooks.started(start)
	}
	go func() {
		h, err := c.recordFrom(start, ev, target{mode: modeString, key: key}, lock)
		done <- result{h, err}
	}()
	waiter := ""
	var res result
	returned := false
	for waiter == "" && !returned && bg.Err() == nil {
		select {
		case res = <-done:
			returned = true
			continue
		default:
		}
		waiter = newOnQuorum(e.direct.waiters(bg, key), known, e.quorum)
		if waiter != "" {
			e.History.Register(c.ID, name, start, time.Now())
		} else {
			time.Sleep(2 * time.Millisecond)
		}
	}
	g.Unlock()
	if hooks.placed != nil {
		hooks.placed()
	}
	if !returned {
		res = <-done
	}
	return fairResult{h: res.h, err: res.err, start: start, waiter: waiter}
}

// newOnQuorum returns the one waiter that is not known and is registered
// on at least quorum masters of ws, or "" when there is none (or more
// than one).
func newOnQuorum(ws []map[string]bool, known map[string]bool, quorum int) string {
	count := map[string]int{}
	for _, m := range ws {
		for w := range m {
			if !known[w] {
				count[w]++
			}
		}
	}
	found := ""
	for w, n := range count {
		if n >= quorum {
			if found != "" {
				return ""
			}
			found = w
		}
	}
	return found
}
