package workload

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/redlock"
)

// The RW kind: readers and writers of one RWMutex. Readers extend their
// holds now and then, and some are renewed (AutoRenew) past their TTL.
// While a writer holds, every master is read for a live reader beside it
// ("{key}:w" and "{key}:r", the documented layout of redlock.RWMutex): no
// script admits one, so one that shows was re-admitted by a read hold's
// Extend that landed after the reader expired
// (checker.NoReaderBesideWriter).

// Probabilities of the RW kind's choices.
const (
	pReadExtend = 0.3 // a reader extends its hold
	pReadRenew  = 0.2 // a reader's hold is renewed (AutoRenew) past its TTL
)

func (s *step) rw(ctx context.Context) error {
	name := s.key(RW)
	key := s.c.env.Key(name)
	reader := s.chance(pReader)
	renewed := reader && s.chance(pReadRenew)
	l, o := s.c.Locker, (*holdObserver)(nil)
	if renewed {
		var err error
		if l, o, err = s.c.watched(false, true); err != nil {
			return err
		}
	}
	m := l.RWMutex(key)
	try := s.chance(pTry)
	ev := checker.Event{Key: name, Shared: reader, Renewed: renewed}
	if renewed {
		ev.TTL = s.cfg.TTL
	}
	t := target{mode: modeString, key: "{" + key + "}:w"}
	lock := m.Lock
	switch {
	case reader && try:
		lock = m.TryRLock
	case reader:
		lock = m.RLock
	case try:
		lock = m.TryLock
	}
	var opts []redlock.Option
	if reader {
		t = target{mode: modeZset, key: "{" + key + "}:r"}
	} else {
		opts = s.metadata() // a writer's holder record, beside its writer key
	}
	actx, cancel := s.acquireCtx(ctx)
	defer cancel()
	h, err := s.c.record(ev, t, func() (*redlock.Lock, error) { return lock(actx, s.cfg.TTL, opts...) })
	if err != nil {
		return harness(err)
	}
	if !reader {
		h.withRecord(recordOf(t.key, holderKey(key), h.Lock.Token(), false), len(opts) > 0)
	}
	s.c.env.sample(s.bg, h)
	switch {
	case renewed:
		lctx, stop := s.c.watch(h, o)
		s.c.workUntil(s.bg, h, lctx, s.between(s.cfg.TTL/2, s.cfg.TTL+s.cfg.TTL/2), s.cfg.TTL/4)
		stop()
	case reader && s.chance(pReadExtend):
		s.extendOnce(h, s.ttl(s.cfg.TTL/4, 2*s.cfg.TTL))
		s.c.env.sample(s.bg, h)
		time.Sleep(s.between(0, s.cfg.Hold))
	default:
		if !reader {
			s.c.besideWriter(s.bg, name)
		}
		time.Sleep(s.between(0, s.cfg.Hold))
	}
	if !reader {
		h.Write()
		s.c.besideWriter(s.bg, name)
	}
	s.release(h)
	return nil
}

// readersBesideWriter returns how many live readers this master holds
// beside a writer, or -1 when it holds no writer. KEYS[1] writer key,
// KEYS[2] readers.
var readersBesideWriter = redis.NewScript(2, `
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -1
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
if n == 0 then
  return -1
end
return n
`)

// besideWriter reads every master for a live reader of the read-write
// lock named name beside its writer, records each master that holds one,
// and reports whether one did.
func (c *Client) besideWriter(ctx context.Context, name string) bool {
	key := c.env.Key(name)
	found := false
	for j, r := range c.env.direct.readWith(ctx, readersBesideWriter, "{"+key+"}:w", "{"+key+"}:r") {
		if r.known && r.held {
			c.env.History.Coexist(c.ID, name, time.Now(), fmt.Sprintf("master %d holds %d live readers beside the writer", j, r.left/time.Millisecond))
			found = true
		}
	}
	return found
}
