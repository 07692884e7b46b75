package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/quorum"
)

// Fencing tokens that survive a restart. Each master keeps a counter per
// key; an acquisition raises it to max(counter + 1, the master's clock in
// microseconds) where it is granted, takes the maximum over its quorum as
// its token, and writes that back to the quorum (counter = max(counter,
// token)). Any later quorum shares a master with this one, which either
// still has its counter (so the next token is greater), or lost it in a
// restart, or let it expire: then it starts again from its clock, which
// is greater than every token issued before as long as the masters' clocks
// neither step back nor disagree by more than the time the restart took
// (the restart guard's length, when it is on). So counters may expire:
// each lives fenceLife (or the lock's TTL, if longer) after its last use,
// and leftover counters do not pile up. Tokens are microsecond timestamps
// or a little above (about 1.7e15 in 2026): well inside int64 and Lua's
// exact integers.

// fenceLife is the shortest life of a fencing counter after its last use.
const fenceLife = 24 * time.Hour

// fenceMS is a fencing counter's lifetime, in ms, for a lock of ms.
func fenceMS(ms int64) int64 { return max(ms, fenceLife.Milliseconds()) }

// raiseFence combines the fencing counters of the quorum that granted the
// lock (their maximum is the lock's fencing token) and writes the token back
// to those masters, counter = max(counter, token), before the lock is
// returned. Any later quorum shares a master with this one, so the next
// holder's INCR there yields a strictly greater token.
func (l *Locker) raiseFence(ctx context.Context, res *quorum.Result, counterKey string, ttlMS int64) (int64, error) {
	var fence int64
	holders := make([]int, 0, res.Yes)
	for i, v := range res.Votes {
		if res.Answered[i] && v.Yes {
			holders = append(holders, i)
			fence = max(fence, v.Value.(int64))
		}
	}
	raise := l.newCall(opLock, fenceRaiseScript, counterKey, nil, fence, fenceMS(ttlMS))
	wb, err := l.fanOutTo(ctx, raise, holders, l.quorum)
	if err != nil {
		return 0, err
	}
	if !wb.OK() {
		return 0, fmt.Errorf("redlock: fencing token written back to %d of %d masters, quorum %d: %w",
			wb.Yes, len(holders), l.quorum, wb.Err(func(j int) string { return l.masters[holders[j]].addr() }))
	}
	return fence, nil
}

// Fence returns the lock's fencing token: it increases strictly from one
// holder of the key to the next, across any quorums of the same masters, as
// long as the masters keep their data (AOF with appendfsync always). Pass it
// to the protected resource, which must refuse a token lower than the
// highest it has seen. Fence is 0 unless Config.Fencing is set, and for the
// read holds of an RWMutex, which may overlap; writers and reentrant holds
// carry tokens (see RWMutex and Reentrant).
//
// The counter behind it, key "{key}:fence" (or "key:fence" when key already
// has a hash tag), persists on every master after the lock is released.
func (lk *Lock) Fence() int64 { return lk.fence }
