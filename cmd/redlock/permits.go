package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/quorumlock/quorumlock/pool"
)

// scanCount is the COUNT of each SCAN that looks for permits, and
// scanLimit the most keys a master may have for redlock to SCAN it: a
// hundred calls at most, so that a look at 3 a.m. does not weigh on a
// large master. Beyond it, --permits K names the permits.
const (
	scanCount = 1000
	scanLimit = 100 * scanCount
)

// permitList returns the semaphore permits to look at on master n: 0 to
// K-1 when K (--permits) is positive, else those a SCAN of the master's
// keyspace finds (MATCH on the key's slot prefix), in order; but none,
// and a note saying why, when the master has more than scanLimit keys.
// Each call has its own timeout.
func permitList(ctx context.Context, n *pool.Node, k lockKeys, K int, timeout time.Duration) (permits []int, note string, err error) {
	switch {
	case K == 0 && !k.derivable:
		return nil, "", nil
	case K > 0:
		out := make([]int, K)
		for i := range out {
			out[i] = i
		}
		return out, "", nil
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	size, err := n.Do(cctx, "DBSIZE")
	cancel()
	if err != nil {
		return nil, "", fmt.Errorf("DBSIZE: %w", err)
	}
	if size, _ := size.(int64); size > scanLimit {
		return nil, fmt.Sprintf("semaphore permits not looked for: the master has %d keys, too many to SCAN (give --permits K)", size), nil
	}
	found, err := scanPermits(ctx, n, k, timeout)
	return found, "", err
}

// scanPermits SCANs master n for the permits of k.
func scanPermits(ctx context.Context, n *pool.Node, k lockKeys, timeout time.Duration) ([]int, error) {
	var found []int
	cursor := "0"
	for {
		cctx, cancel := context.WithTimeout(ctx, timeout)
		reply, err := n.Do(cctx, "SCAN", cursor, "MATCH", k.permitPattern(), "COUNT", scanCount)
		cancel()
		if err != nil {
			return nil, fmt.Errorf("SCAN: %w", err)
		}
		parts, _ := reply.([]any)
		if len(parts) != 2 {
			return nil, fmt.Errorf("SCAN: unexpected reply %v", reply)
		}
		names, _ := parts[1].([]any)
		for _, v := range names {
			if i, ok := k.permitIndex(string(asBytes(v))); ok {
				found = append(found, i)
			}
		}
		if cursor = string(asBytes(parts[0])); cursor == "0" {
			break
		}
		if _, err := strconv.ParseUint(cursor, 10, 64); err != nil {
			return nil, fmt.Errorf("SCAN: bad cursor %q", cursor)
		}
	}
	slices.Sort(found)
	return slices.Compact(found), nil
}
