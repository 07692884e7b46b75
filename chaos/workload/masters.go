package workload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/netfault"
)

// The masters are read directly, past the faulty proxies, to learn the real
// expiry of a lock: after each grant and each Extend the holder samples its
// key on every master, and after each release or failed call the client
// checks that no quorum still holds what it wrote.

// Where a lock's state lies on a master, by kind of lock.
const (
	modeString = "string" // a string key holding the token (plain, fenced, RW writer)
	modeHash   = "hash"   // a reentrant hash held by an owner: a field per owner (owner -> count), or the field "owner" (owner and h:<hold id> fields)
	modeZset   = "zset"   // a sorted set member whose score is its expiry (RW reader)
	modeAny    = "any"    // the key, whatever it holds (a failed call's private key)
	// modeRecord (record.go): a holder record whose field "token" is member.
)

// target is a lock's state on a master: key, and the token (or owner, or
// reader) that marks it as this lock's. A holder record's target
// (modeRecord, record.go) also names the lock key it is kept beside,
// whether it is a reentrant owner's, and whether a master may hold the
// lock key without it (mayLack).
type target struct {
	mode, key, member string
	lock              string
	owner, mayLack    bool
}

// acquiresExcuse reports whether a failed acquire excuses a master that
// keeps t, as for a reentrant hold, which is released only where it was
// granted (see excused): a reentrant hash, or its owner's holder record.
func (t target) acquiresExcuse() bool { return t.mode == modeHash || t.owner }

// remainingScript returns how many milliseconds the target has left on
// this master, or -1 when the master does not hold it. A key without a TTL
// counts as never expiring.
var remainingScript = redis.NewScript(1, `
local function ttl(k)
  local p = redis.call('PTTL', k)
  if p == -1 then return 1000000000000 end
  return p
end
local mode, m = ARGV[1], ARGV[2]
if mode == 'string' then
  if redis.call('GET', KEYS[1]) == m then return ttl(KEYS[1]) end
  return -1
elseif mode == 'hash' then
  if redis.call('HEXISTS', KEYS[1], m) == 1 or redis.call('HGET', KEYS[1], 'owner') == m then return ttl(KEYS[1]) end
  return -1
elseif mode == 'record' then
  if redis.call('HGET', KEYS[1], 'token') == m then return ttl(KEYS[1]) end
  return -1
elseif mode == 'zset' then
  local s = redis.call('ZSCORE', KEYS[1], m)
  if not s then return -1 end
  local t = redis.call('TIME')
  local r = tonumber(s) - (tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
  if r <= 0 then return -1 end
  return math.min(r, ttl(KEYS[1]))
end
if redis.call('EXISTS', KEYS[1]) == 1 then return ttl(KEYS[1]) end
return -1
`)

// ReadTimeout bounds one direct read of a master. A paused master does not
// answer in time: its state counts as unknown.
const ReadTimeout = 150 * time.Millisecond

// masters holds a connection pool per master of the cluster.
type masters struct {
	pools []*redis.Pool
}

func newMasters(c cluster.Cluster) *masters {
	m := &masters{}
	for _, n := range c.Nodes() {
		addr, password := n.Addr(), c.Password()
		m.pools = append(m.pools, &redis.Pool{
			MaxIdle: 4,
			DialContext: func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", addr, redis.DialPassword(password),
					redis.DialConnectTimeout(ReadTimeout), redis.DialReadTimeout(ReadTimeout), redis.DialWriteTimeout(ReadTimeout))
			},
		})
	}
	return m
}

func (m *masters) Close() error {
	var errs []error
	for _, p := range m.pools {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// reading is what one master said of a target.
type reading struct {
	known bool          // the master answered
	held  bool          // it holds the target
	left  time.Duration // and for that long still
	at    time.Time     // when the answer arrived
}

// read asks every master, at once, how long it still holds t.
func (m *masters) read(ctx context.Context, t target) []reading {
	return m.readWith(ctx, remainingScript, t.key, t.mode, t.member)
}

// do runs one command on every master, one after another.
func (m *masters) do(ctx context.Context, cmd string, args ...any) error {
	for i := range m.pools {
		err := m.on(ctx, i, func(ctx context.Context, c redis.Conn) error {
			_, err := redis.DoContext(c, ctx, cmd, args...)
			return err
		})
		if err != nil {
			return fmt.Errorf("workload: %s on master %d: %w", cmd, i, err)
		}
	}
	return nil
}

// on runs fn with a connection to master i, all of it within ReadTimeout.
func (m *masters) on(ctx context.Context, i int, fn func(ctx context.Context, c redis.Conn) error) error {
	ctx, cancel := context.WithTimeout(ctx, ReadTimeout)
	defer cancel()
	c, err := m.pools[i].GetContext(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(ctx, c)
}

// quorumExpiry is, from readings sent at sent, the latest time by which
// fewer than quorum masters still hold the target: a master that holds it
// holds it until at most its answer's arrival plus what it had left (plus
// 1ms of PTTL rounding); one that does not hold it gave it up before its
// answer arrived (not before sent: a paused or slow master runs the read
// late, possibly after the key's expiry, and a late "gone" says nothing of
// the time before); one that did not answer is assumed to hold it for ever
// (a paused master's keys outlive the pause, and unknown must not read as
// a violation).
func quorumExpiry(rs []reading, sent time.Time, quorum int) time.Time {
	forever := sent.Add(24 * time.Hour)
	ends := make([]time.Time, len(rs))
	for i, r := range rs {
		switch {
		case !r.known:
			ends[i] = forever
		case r.held:
			ends[i] = r.at.Add(r.left + time.Millisecond)
		default:
			ends[i] = r.at
		}
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return b.Compare(a) })
	return ends[quorum-1]
}

// holding counts the masters that answered and hold t.
func holding(rs []reading) int {
	n := 0
	for _, r := range rs {
		if r.known && r.held {
			n++
		}
	}
	return n
}

// surelyFewer reports whether fewer than a quorum of masters can hold t:
// the masters that did not answer (paused, down, slow) count as holding,
// since a release sent to them may not have landed yet.
func (c *Client) surelyFewer(ctx context.Context, t target) bool {
	rs := c.env.direct.read(ctx, t)
	n := 0
	for _, r := range rs {
		if !r.known || r.held {
			n++
		}
	}
	return n < c.env.quorum
}

// Sample is sample for a scenario's own holds: it records whether each
// one's Until lies within what the masters enforce (until-within-expiry).
func (e *Env) Sample(ctx context.Context, hs ...*Held) { e.sample(ctx, hs...) }

// sample reads the masters' expiry of the target of hs[0] and records, for
// every hold in hs (one owner's holds of one key), whether its Until lies
// within it. Each Until is read right before the masters are read and again
// right after, and the earlier one is used. The library lowers Until the
// moment it sends an Extend (which may land at once), so an Extend or a
// renewal that landed before the read had lowered Until by the second
// reading; one that starts after the read cannot have changed what the
// masters answered, and the first reading predates it.
func (e *Env) sample(ctx context.Context, hs ...*Held) {
	if len(hs) == 0 {
		return
	}
	before := make([]time.Time, len(hs))
	for i, h := range hs {
		before[i] = h.Lock.Until()
	}
	sent := time.Now()
	rs := e.direct.read(ctx, hs[0].target)
	exp := quorumExpiry(rs, sent, e.quorum)
	for i, h := range hs {
		until := before[i]
		if u := h.Lock.Until(); u.Before(until) {
			until = u
		}
		if !sent.Before(until) {
			continue // the holder no longer believed it held the lock
		}
		e.History.Sample(h.ID, sent, until, exp)
	}
	e.auditRecord(ctx, hs[0]) // its holder record, if it keeps one (record.go)
}

// SettleWithin bounds how long a client waits, after a call returned and
// its commands reached the masters (awaitDelivered), for what the call
// wrote to leave a quorum of the masters. Releases sent before the call
// returned land within a round trip; ones queued behind a paused master do
// not count (its answer is unknown, not "held").
const SettleWithin = time.Second

// settle waits until fewer than a quorum of the masters hold t, for up to
// SettleWithin, and records a Leftover if they still do. what names the
// call for the report.
func (c *Client) settle(ctx context.Context, name string, t target, what string) {
	c.settleWithin(ctx, name, t, what, SettleWithin)
}

// deliveredWithin bounds how long a settle waits for the bytes its client
// sent to reach the masters: past the longest delay a fault gives them
// (fault.DefaultDelay, drawn up to 1.5 times), and past a cut's hold.
const deliveredWithin = 5 * time.Second

// awaitDelivered waits, for up to deliveredWithin, until every command
// client c sent to the masters reached them (or was dropped with its
// connection): a fault may deliver a call's commands long after the call
// returned, and what they do on the masters is the call's doing. It first
// waits until the bytes a fault delayed on the client's links have
// arrived, either way (netfault.Link.LateUntil): a transport that keeps
// a master's commands in order (the adapters) sends a call's release only
// once the command before it returned, which a late reply holds up.
func (e *Env) awaitDelivered(ctx context.Context, c int) {
	deadline := time.Now().Add(deliveredWithin)
	links := make([]*netfault.Link, len(e.Cluster.Nodes()))
	var late time.Time
	for j := range links {
		links[j] = e.Net.Link(c, j)
		if u := links[j].LateUntil(); u.After(late) {
			late = u
		}
	}
	if late.After(deadline) {
		late = deadline
	}
	if wait := time.Until(late); wait > 0 {
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
	}
	marks := make([]netfault.Mark, len(links))
	for j, l := range links {
		marks[j] = l.Sent()
	}
	for ; time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(5 * time.Millisecond) {
		done := true
		for j, l := range links {
			done = done && l.Delivered(marks[j])
		}
		if done {
			return
		}
	}
}

// settleWithin is settle, waiting up to within once the client's commands
// reached the masters (awaitDelivered).
func (c *Client) settleWithin(ctx context.Context, name string, t target, what string, within time.Duration) {
	e := c.env
	e.awaitDelivered(ctx, c.ID)
	deadline := time.Now().Add(within)
	for {
		n := holding(e.direct.read(ctx, t))
		if n < e.quorum {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if ctx.Err() == nil {
				e.History.Left(c.ID, name, time.Now(), fmt.Sprintf("%s: %d masters still hold %s %s %v after it returned",
					what, n, t.key, t.member, within))
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
