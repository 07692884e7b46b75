package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// do runs one command on the node at addr over a fresh connection,
// authenticated when the node's cluster has a password. The harness's own
// inspection and fault commands never share connections with the clients
// under test.
func do(ctx context.Context, addr, cmd string, args ...any) (any, error) {
	replies, err := doAll(ctx, addr, append([]any{cmd}, args...))
	if err != nil {
		return nil, err
	}
	return replies[0], nil
}

// doAll runs commands (each its name and arguments) one after the other on
// one fresh connection to addr, as do does one, and returns their replies;
// it stops at the first error.
func doAll(ctx context.Context, addr string, cmds ...[]any) ([]any, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(5 * time.Second)
	}
	timeout := time.Until(deadline)
	if timeout <= 0 {
		return nil, context.DeadlineExceeded
	}
	opts := []redis.DialOption{
		redis.DialConnectTimeout(timeout),
		redis.DialReadTimeout(timeout),
		redis.DialWriteTimeout(timeout),
	}
	if pw := passwordFor(addr); pw != "" {
		opts = append(opts, redis.DialPassword(pw))
	}
	c, err := redis.DialContext(ctx, "tcp", addr, opts...)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	replies := make([]any, len(cmds))
	for i, cmd := range cmds {
		if replies[i], err = redis.DoContext(c, ctx, cmd[0].(string), cmd[1:]...); err != nil {
			return nil, err
		}
	}
	return replies, nil
}

// awaitPing polls addr until it answers PING or ctx ends.
func awaitPing(ctx context.Context, addr string) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err := do(pctx, addr, "PING")
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: %s does not answer PING: %w (last error: %v)", addr, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// clockJumpScript shifts the expiry of every key with a TTL by -ARGV[1]
// milliseconds, deleting those that would have expired, in one atomic step:
// what the node would do if its clock jumped forward by that much. A negative
// jump (a clock going back) extends the TTLs instead.
const clockJumpScript = `
local jump = tonumber(ARGV[1])
local cursor = "0"
local shifted, expired = 0, 0
repeat
  local r = redis.call("SCAN", cursor, "COUNT", 1000)
  cursor = r[1]
  for _, k in ipairs(r[2]) do
    local pttl = redis.call("PTTL", k)
    if pttl >= 0 then
      if pttl <= jump then
        redis.call("DEL", k)
        expired = expired + 1
      else
        redis.call("PEXPIRE", k, pttl - jump)
        shifted = shifted + 1
      end
    end
  end
until cursor == "0"
return {shifted, expired}
`

// JumpResult says what a clock jump did to a node's keys.
type JumpResult struct {
	// Shifted keys had their TTL shortened (or lengthened) by the jump.
	Shifted int
	// Expired keys had a TTL no longer than the jump and were deleted.
	Expired int
}

// ClockJump emulates a jump of the clock of the node at addr by d: every key
// that has a TTL expires d earlier than it would have, and keys whose TTL is
// at most d are deleted now. It runs as one script, so the node sees the jump
// as a single instant. A negative d emulates a clock going back.
//
// Redis measures expiry with its own wall clock; a real jump of that clock
// has exactly this effect on lock keys. Time-faking preload libraries are not
// used because they crash Redis's allocator.
func ClockJump(ctx context.Context, addr string, d time.Duration) (JumpResult, error) {
	r, err := redis.Ints(do(ctx, addr, "EVAL", clockJumpScript, 0, d.Milliseconds()))
	if err != nil {
		return JumpResult{}, fmt.Errorf("cluster: clock jump on %s: %w", addr, err)
	}
	return JumpResult{Shifted: r[0], Expired: r[1]}, nil
}

// Keys returns the keys matching pattern (SCAN MATCH syntax) that the node
// at addr holds.
func Keys(ctx context.Context, addr, pattern string) ([]string, error) {
	var all []string
	cursor := "0"
	for {
		r, err := redis.Values(do(ctx, addr, "SCAN", cursor, "MATCH", pattern, "COUNT", 1000))
		if err != nil {
			return nil, fmt.Errorf("cluster: scan %s: %w", addr, err)
		}
		keys, err := redis.Strings(r[1], nil)
		if err != nil {
			return nil, fmt.Errorf("cluster: scan %s: %w", addr, err)
		}
		all = append(all, keys...)
		if cursor, err = redis.String(r[0], nil); err != nil || cursor == "0" {
			return all, err
		}
	}
}

// Do runs one command on the node at addr, as the harness (authenticated
// as the cluster's nodes require), and returns its error.
func Do(ctx context.Context, addr, cmd string, args ...any) error {
	_, err := do(ctx, addr, cmd, args...)
	return err
}

// PTTL returns the time to live of key on the node at addr in
// milliseconds: -1 for a key without one, -2 for no such key.
func PTTL(ctx context.Context, addr, key string) (int64, error) {
	ms, err := redis.Int64(do(ctx, addr, "PTTL", key))
	if err != nil {
		return 0, fmt.Errorf("cluster: pttl on %s: %w", addr, err)
	}
	return ms, nil
}

// CountKeys returns how many keys matching pattern the node at addr holds.
func CountKeys(ctx context.Context, addr, pattern string) (int, error) {
	keys, err := Keys(ctx, addr, pattern)
	return len(keys), err
}

// Get returns the string value of key on the node at addr, and false if
// there is none.
func Get(ctx context.Context, addr, key string) (string, bool, error) {
	v, err := redis.String(do(ctx, addr, "GET", key))
	if err == redis.ErrNil {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("cluster: get on %s: %w", addr, err)
	}
	return v, true, nil
}

// appendOnly reports whether the node at addr runs with AOF and appendfsync
// always.
func appendOnly(ctx context.Context, addr string) (bool, error) {
	get := func(name string) (string, error) {
		kv, err := redis.Strings(do(ctx, addr, "CONFIG", "GET", name))
		if err != nil || len(kv) != 2 {
			return "", fmt.Errorf("cluster: config get %s on %s: %v", name, addr, err)
		}
		return kv[1], nil
	}
	aof, err := get("appendonly")
	if err != nil {
		return false, err
	}
	fsync, err := get("appendfsync")
	if err != nil {
		return false, err
	}
	return aof == "yes" && fsync == "always", nil
}

// infoValue is the value of field in an INFO reply, "" when absent.
func infoValue(info, field string) string {
	for line := range strings.Lines(info) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == field {
			return v
		}
	}
	return ""
}
