package sim_test

import (
	"errors"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/redlocktest"
	"github.com/quorumlock/quorumlock/sim"
	"github.com/quorumlock/quorumlock/sim/master"
	"github.com/quorumlock/quorumlock/sim/schedule"
	"github.com/quorumlock/quorumlock/sim/world"
)

// The simulated master must answer as redis-server does. The calls are
// the library's own: every script call and command the masters ran in
// simulated runs of every lock kind (faults included, so that late and
// refused calls are among them), recorded master by master, then replayed
// in order on a fresh real redis-server and a fresh simulated master,
// each call at the same moment of the wall clock on both; every reply
// must match. Numbers that are clock readings (fencing tokens seeded
// from TIME, in microseconds) may differ by the replay's own duration.
// Hand-made calls cover what the library's runs rarely meet: error
// replies, nil conversions, the bounds of the sorted-set commands.

// call is one recorded call.
type call struct {
	src  string // "" for a command
	keys []string
	args []string
}

// record collects the calls of runs of seeds, per master.
func record(t *testing.T, seeds int) [][]call {
	var (
		mu      sync.Mutex
		streams [][]call
	)
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		kinds := []schedule.Kind{schedule.Kinds[int(seed)%len(schedule.Kinds)], schedule.Kinds[int(seed+3)%len(schedule.Kinds)]}
		s := schedule.Generate(seed, schedule.Options{Kinds: kinds, Horizon: 2 * time.Second})
		per := make([][]call, len(s.Masters))
		sim.Run(t, s, sim.Options{Exec: func(e world.Exec) {
			mu.Lock()
			per[e.Master] = append(per[e.Master], call{src: e.Src, keys: e.Keys, args: e.Args})
			mu.Unlock()
		}})
		streams = append(streams, per...)
	}
	return streams
}

// handmade are calls the library's runs rarely make.
var handmade = []call{
	{args: []string{"SET", "s", "v", "NX", "PX", "10000"}},
	{args: []string{"SET", "s", "v", "NX", "PX", "10000"}},
	{args: []string{"SET", "s", "w", "XX", "PX", "10000"}},
	{args: []string{"GET", "s"}},
	{args: []string{"GET", "missing"}},
	{args: []string{"PTTL", "missing"}},
	{args: []string{"INCR", "n"}},
	{args: []string{"INCR", "s"}},
	{args: []string{"HSET", "h", "a", "1", "b", "2"}},
	{args: []string{"GET", "h"}},
	{args: []string{"HMGET", "h", "a", "x", "b"}},
	{args: []string{"HDEL", "h", "a", "x"}},
	{args: []string{"HLEN", "h"}},
	{args: []string{"HEXISTS", "h", "b"}},
	{args: []string{"ZADD", "z", "1", "a", "2", "b", "2", "c"}},
	{args: []string{"ZADD", "z", "XX", "5", "a", "7", "d"}},
	{args: []string{"ZRANGE", "z", "0", "0"}},
	{args: []string{"ZRANGE", "z", "-2", "-1"}},
	{args: []string{"ZRANGEBYSCORE", "z", "-inf", "(5"}},
	{args: []string{"ZRANGEBYSCORE", "z", "2", "+inf"}},
	{args: []string{"ZSCORE", "z", "a"}},
	{args: []string{"ZSCORE", "z", "x"}},
	{args: []string{"ZREMRANGEBYSCORE", "z", "-inf", "2"}},
	{args: []string{"ZCARD", "z"}},
	{args: []string{"ZREM", "z", "a"}},
	{args: []string{"EXISTS", "z", "h", "s", "missing"}},
	{args: []string{"PEXPIRE", "s", "-1"}},
	{args: []string{"EXISTS", "s"}},
	{args: []string{"DEL", "h", "z", "missing"}},
	{src: "return redis.call('GET', KEYS[1])", keys: []string{"missing"}},
	{src: "return {1, 'two', false, 4}"},
	{src: "return {1, nil, 3}"},
	{src: "return 3.99"},
	{src: "return -3.99"},
	{src: "return true"},
	{src: "return redis.call('SET', KEYS[1], ARGV[1])", keys: []string{"k"}, args: []string{"v"}},
	{src: "return redis.call('INCR', KEYS[1])", keys: []string{"k"}},
	{src: "return redis.pcall('INCR', KEYS[1])", keys: []string{"k"}},
	{src: "return redis.call('HMGET', KEYS[1], 'a', 'b')", keys: []string{"k2"}},
	{src: "redis.call('SET', KEYS[1], 1234567890123456, 'PX', 1000) return redis.call('GET', KEYS[1])", keys: []string{"k3"}},
	{src: "redis.call('SET', KEYS[1], 1.5) return redis.call('GET', KEYS[1])", keys: []string{"k4"}},
	{src: "return tonumber(redis.call('GET', KEYS[1]) or '0') + 1", keys: []string{"k3"}},
	{src: "return redis.error_reply('custom')"},
	{src: "return redis.status_reply('FINE')"},
	{src: "return #KEYS + #ARGV", keys: []string{"a", "b"}, args: []string{"c"}},
	{src: "local t = redis.call('TIME') return #t"},
	{src: "return redis.call('ZRANGE', KEYS[1], 0, 0)[1] ~= ARGV[1]", keys: []string{"nothing"}, args: []string{"x"}},
}

func TestConformance(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not on PATH")
	}
	real := redlocktest.NewMaster(t)
	conn, err := redis.Dial("tcp", real.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	streams := record(t, 24)
	streams = append(streams, handmade)
	calls, diffs := 0, 0
	for si, stream := range streams {
		if _, err := conn.Do("FLUSHALL"); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		m := master.New("m", now, master.Persistence{}, master.NewClock(now, 0, 1), -1)
		for _, c := range stream {
			calls++
			want, werr := doReal(conn, c)
			got := doSim(m, c)
			if msg := compare(want, werr, got); msg != "" {
				diffs++
				if diffs <= 10 {
					t.Errorf("stream %d, %s: %s", si, describeCall(c), msg)
				}
			}
		}
	}
	t.Logf("%d calls in %d streams compared, %d differ", calls, len(streams), diffs)
	if calls < 2000 {
		t.Errorf("only %d calls compared", calls)
	}
}

func doReal(conn redis.Conn, c call) (any, error) {
	if c.src == "" {
		args := make([]any, len(c.args)-1)
		for i, a := range c.args[1:] {
			args[i] = a
		}
		return conn.Do(c.args[0], args...)
	}
	args := []any{c.src, len(c.keys)}
	for _, k := range c.keys {
		args = append(args, k)
	}
	for _, a := range c.args {
		args = append(args, a)
	}
	return conn.Do("EVAL", args...)
}

func doSim(m *master.Master, c call) any {
	if c.src == "" {
		return m.Do(time.Now(), c.args, nil)
	}
	return m.Eval(time.Now(), c.src, c.keys, c.args, nil)
}

// compare returns "" when the simulated reply got matches the real one.
func compare(want any, werr error, got any) string {
	var re redis.Error
	if werr != nil && !errors.As(werr, &re) {
		return "real: " + werr.Error()
	}
	if ge, ok := got.(master.Error); ok {
		if werr == nil {
			return fmt.Sprintf("sim answered error %q, redis %v", ge, show(want))
		}
		if kind(string(ge)) != kind(werr.Error()) {
			return fmt.Sprintf("sim error %q, redis error %q", ge, werr)
		}
		return ""
	}
	if werr != nil {
		return fmt.Sprintf("sim answered %v, redis error %q", show(got), werr)
	}
	if !same(want, got) {
		return fmt.Sprintf("sim answered %v, redis %v", show(got), show(want))
	}
	return ""
}

// kind is an error reply's kind: its first word.
func kind(msg string) string {
	w, _, _ := strings.Cut(msg, " ")
	return w
}

func same(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case int64:
		g, ok := got.(int64)
		if !ok {
			return false
		}
		if w > 1e12 && g > 1e12 { // a clock reading in µs (a fencing token)
			return math.Abs(float64(w-g)) < 5e6
		}
		return w == g
	case []byte:
		g, ok := got.([]byte)
		return ok && string(w) == string(g)
	case string:
		g, ok := got.(master.Status)
		return ok && w == string(g)
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !same(w[i], g[i]) && !clockString(w[i], g[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// clockString reports two bulk strings that are both clock readings (TIME).
func clockString(a, b any) bool {
	x, ok1 := a.([]byte)
	y, ok2 := b.([]byte)
	return ok1 && ok2 && len(x) >= 5 && len(y) >= 5 && isDigits(x) && isDigits(y)
}

func isDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func show(v any) string {
	switch v := v.(type) {
	case []byte:
		return fmt.Sprintf("%q", v)
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = show(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%#v", v)
}

func describeCall(c call) string {
	if c.src == "" {
		return strings.Join(c.args, " ")
	}
	first, _, _ := strings.Cut(c.src, "\n")
	return fmt.Sprintf("script %q keys=%v args=%v", first, c.keys, c.args)
}
