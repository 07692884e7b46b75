package workload

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/layout"
)

// Holder records: about half of the exclusive acquisitions of the reentrant,
// RW (writers), fair, multi-key, semaphore and resume kinds pass
// redlock.WithMetadata, and the lock then keeps a holder record beside its
// first key on every master that grants it (layout.Holder: the hash whose
// field "token" names the holder's token, a reentrant lock's owner). Two
// checks follow it:
//
//   - the release's leftover check (cleared) covers the record as it does
//     the lock key (modeRecord), with the same excuses: once the release
//     returned, no master to which no release failed may keep a record
//     naming the hold's token;
//   - every sample of a hold that keeps one (Env.sample) also reads, in one
//     script per master, the record beside the lock key (recordAudit): a
//     record must name the master's present holder of the lock key and
//     expire with it (the same PTTL), and a lock key held with a token
//     acquired with metadata must have its record. The script reads both
//     at one instant of the master, so the check needs no excuse: no fault
//     makes a master keep a record that outlives its lock, or falls short
//     of it.

// pMetadata is the probability that an exclusive acquisition of the kinds
// above passes WithMetadata.
const pMetadata = 0.5

// modeRecord is the target mode of a holder record: key is the record,
// member the token (a reentrant lock's owner) it must name.
const modeRecord = "record"

// metadata draws whether the next acquisition passes WithMetadata, and
// returns its options: none, or WithMetadata with the client's id and a
// number of its own for the acquisition.
func (s *step) metadata() []redlock.Option {
	if !s.chance(pMetadata) {
		return nil
	}
	s.c.ops++
	return []redlock.Option{redlock.WithMetadata(map[string]string{
		"client": strconv.Itoa(s.c.ID),
		"op":     strconv.Itoa(s.c.ops),
	})}
}

// recordOf returns the target of the holder record named record that a
// hold of the lock key lock (as the library's scripts see it: the first
// key) keeps, naming member; owner is set for a reentrant owner's record,
// whose acquires excuse a master as its hash's do, and which a master may
// lack where it holds the hash (the owner's holds with metadata were not
// granted there).
func recordOf(lock, record, member string, owner bool) *target {
	return &target{mode: modeRecord, key: record, member: member, lock: lock, owner: owner, mayLack: owner}
}

// withRecord sets what h keeps of a holder record: rt, when kept (the
// hold was acquired with metadata, or resumed a lock that was), or a
// reentrant owner's, which every hold of the owner keeps in step.
func (h *Held) withRecord(rt *target, kept bool) *Held {
	if h != nil && (kept || rt.owner) {
		h.record = rt
	}
	return h
}

// clearedRecord is cleared of h's holder record, if it keeps one, once
// the check of its lock key (cleared) returned.
func (c *Client) clearedRecord(ctx context.Context, h *Held, what string, within time.Duration, cs ...*Client) {
	if h.record != nil {
		c.recordGone(ctx, h.name, *h.record, what, h.since, within, cs...)
	}
}

// recordGone checks the record rt as cleared checks a lock key, after the
// check of the lock key (which waited for the client's commands to reach
// the masters): it waits up to within for no master that is not excused
// to keep the record, and records a Remained for those that keep it, or
// kept it until it expired. It skips cleared's wait for fewer than a
// quorum (settle): a record that outlives its release expires with the
// TTL its lock had left, often within that wait, and would pass unseen.
func (c *Client) recordGone(ctx context.Context, name string, rt target, what string, since time.Time, within time.Duration, cs ...*Client) {
	c.remains(ctx, name, rt, what+" (its holder record)", since, time.Now().Add(within), cs...)
}

// recordAudit checks, at one instant of a master, the holder record
// KEYS[2] beside the lock key KEYS[1] (ARGV[1] the token a hold of it was
// acquired with, ARGV[2] '1' when that hold must keep a record wherever it
// holds the key). It returns ” when all is well, else what is wrong. The
// lock key's holder is read as the library's recorded scripts read it: a
// string's value, a reentrant hash's owner. A record within recordSlack of
// its expiry is not judged (the lock key and the record are given the same
// expiry, which Redis rounds to its milliseconds).
var recordAudit = redis.NewScript(2, `
local function holder(k)
  local kind = redis.call('TYPE', k)['ok']
  if kind == 'string' then
    return redis.call('GET', k)
  elseif kind == 'hash' then
    return redis.call('HGET', k, 'owner')
  end
  return false
end
local h = holder(KEYS[1])
local r = redis.call('HGET', KEYS[2], 'token')
if not r then
  if ARGV[2] == '1' and h == ARGV[1] then
    return 'the lock key is held with token ' .. ARGV[1] .. ', acquired with metadata, and no holder record is beside it'
  end
  return ''
end
local pr = redis.call('PTTL', KEYS[2])
local pl = redis.call('PTTL', KEYS[1])
if pr >= 0 and pr <= tonumber(ARGV[3]) then
  return ''
end
if r ~= h then
  return 'the holder record names ' .. r .. ' (PTTL ' .. pr .. 'ms) while the lock key is held by ' .. tostring(h)
end
if pr < 0 or math.abs(pr - pl) > tonumber(ARGV[3]) then
  return 'the holder record of ' .. r .. ' has a PTTL of ' .. pr .. 'ms, its lock key ' .. pl .. 'ms'
end
return ''
`)

// recordSlack is how far the PTTLs of a record and its lock key may
// differ (they are set to one expiry, read in whole milliseconds), and how
// close to its expiry a record is not judged.
const recordSlack = 5

// auditRecord runs recordAudit for h's record on every master at once and
// records a Remain (nothing-left) for each master whose record is wrong.
func (e *Env) auditRecord(ctx context.Context, h *Held) {
	rt := h.record
	if rt == nil {
		return
	}
	must := "1"
	if rt.mayLack {
		must = "0"
	}
	found := each(ctx, e.direct, func(ctx context.Context, c redis.Conn) (string, error) {
		return redis.String(recordAudit.DoContext(ctx, c, rt.lock, rt.key, rt.member, must, recordSlack))
	})
	for j, what := range found {
		if what != "" {
			e.History.Remain(h.client.ID, h.name, time.Now(), fmt.Sprintf("master %d, lock %d: %s (%s beside %s)", j, h.ID, what, rt.key, rt.lock))
		}
	}
}

// holderKey names the holder record of the lock named key on the masters
// (layout.Holder).
func holderKey(key string) string { return layout.Holder(key) }
