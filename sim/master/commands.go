package master

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The commands a simulated master runs: those the library's scripts call
// through redis.call, and those its Nodes send (PING, ECHO). Replies are
// Go values as a Node returns them: nil, Status for a status reply, int64,
// []byte for a bulk string, []any for an array, Error for an error reply.

// Status is a status reply ("OK", "PONG").
type Status string

// Error is an error reply, its message as the master sends it
// ("WRONGTYPE ...", "ERR ...").
type Error string

func (e Error) Error() string { return string(e) }

var (
	errWrongType = Error("WRONGTYPE Operation against a key holding the wrong kind of value")
	errSyntax    = Error("ERR syntax error")
	errNotInt    = Error("ERR value is not an integer or out of range")
	errNotFloat  = Error("ERR value is not a valid float")
	errMinMax    = Error("ERR min or max is not a float")
)

// typeNames are the kinds of value as TYPE names them.
var typeNames = map[kind]string{kString: "string", kHash: "hash", kZset: "zset"}

func errArity(cmd string) Error {
	return Error("ERR wrong number of arguments for '" + strings.ToLower(cmd) + "' command")
}

// Env is what a command sees of its master beyond the keyspace.
type Env struct {
	// Now is the master's clock in unix milliseconds (key expiry), and
	// Micro in microseconds (TIME).
	Now, Micro int64
	// Publish announces msg on channel and returns the number of
	// subscribers that got it.
	Publish func(channel, msg string) int64
}

// Do runs one command on ks. args[0] is the command's name.
func (ks *Keyspace) Do(env *Env, args []string) any {
	if len(args) == 0 {
		return Error("ERR empty command")
	}
	cmd := strings.ToUpper(args[0])
	a := args[1:]
	now := env.Now
	switch cmd {
	case "PING":
		if len(a) == 1 {
			return []byte(a[0])
		}
		return Status("PONG")
	case "ECHO":
		if len(a) != 1 {
			return errArity(cmd)
		}
		return []byte(a[0])
	case "TIME":
		return []any{[]byte(strconv.FormatInt(env.Micro/1e6, 10)), []byte(strconv.FormatInt(env.Micro%1e6, 10))}
	case "PUBLISH":
		if len(a) != 2 {
			return errArity(cmd)
		}
		if env.Publish == nil {
			return int64(0)
		}
		return env.Publish(a[0], a[1])
	case "EXISTS":
		if len(a) < 1 {
			return errArity(cmd)
		}
		n := int64(0)
		for _, k := range a {
			if ks.get(k, now) != nil {
				n++
			}
		}
		return n
	case "DEL", "UNLINK":
		if len(a) < 1 {
			return errArity(cmd)
		}
		n := int64(0)
		for _, k := range a {
			if ks.del(k, now) {
				n++
			}
		}
		return n
	case "GET":
		if len(a) != 1 {
			return errArity(cmd)
		}
		e := ks.get(a[0], now)
		if e == nil {
			return nil
		}
		if e.kind != kString {
			return errWrongType
		}
		return []byte(e.str)
	case "SET":
		return ks.set(now, a)
	case "INCR":
		if len(a) != 1 {
			return errArity(cmd)
		}
		return ks.incr(now, a[0])
	case "PEXPIRE", "EXPIRE":
		if len(a) != 2 {
			return errArity(cmd)
		}
		n, err := strconv.ParseInt(a[1], 10, 64)
		if err != nil {
			return errNotInt
		}
		if cmd == "EXPIRE" {
			n *= 1000
		}
		e := ks.get(a[0], now)
		if e == nil {
			return int64(0)
		}
		if n <= 0 {
			ks.del(a[0], now)
			return int64(1)
		}
		e.expireAt = now + n
		ks.touched(a[0], e)
		return int64(1)
	case "PTTL", "TTL":
		if len(a) != 1 {
			return errArity(cmd)
		}
		e := ks.get(a[0], now)
		switch {
		case e == nil:
			return int64(-2)
		case e.expireAt == 0:
			return int64(-1)
		}
		ms := e.expireAt - now
		if cmd == "TTL" {
			return (ms + 500) / 1000
		}
		return ms
	case "HGET":
		if len(a) != 2 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kHash)
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		v, ok := e.hash[a[1]]
		if !ok {
			return nil
		}
		return []byte(v)
	case "HMGET":
		if len(a) < 2 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kHash)
		if err != nil {
			return err
		}
		out := make([]any, len(a)-1)
		for i, f := range a[1:] {
			if e == nil {
				continue
			}
			if v, ok := e.hash[f]; ok {
				out[i] = []byte(v)
			}
		}
		return out
	case "HSET":
		if len(a) < 3 || len(a)%2 != 1 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kHash)
		if err != nil {
			return err
		}
		if e == nil {
			e = &entry{kind: kHash, hash: make(map[string]string, (len(a)-1)/2)}
			ks.m[a[0]] = e
		}
		n := int64(0)
		for i := 1; i < len(a); i += 2 {
			if _, ok := e.hash[a[i]]; !ok {
				n++
			}
			e.hash[a[i]] = a[i+1]
		}
		ks.touched(a[0], e)
		return n
	case "HDEL":
		if len(a) < 2 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kHash)
		if err != nil {
			return err
		}
		if e == nil {
			return int64(0)
		}
		n := int64(0)
		for _, f := range a[1:] {
			if _, ok := e.hash[f]; ok {
				delete(e.hash, f)
				n++
			}
		}
		if n > 0 {
			if len(e.hash) == 0 {
				ks.del(a[0], now)
			} else {
				ks.touched(a[0], e)
			}
		}
		return n
	case "HLEN":
		if len(a) != 1 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kHash)
		if err != nil {
			return err
		}
		if e == nil {
			return int64(0)
		}
		return int64(len(e.hash))
	case "HGETALL":
		if len(a) != 1 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kHash)
		if err != nil {
			return err
		}
		out := []any{}
		if e != nil {
			// In field order, for a replay to repeat itself: Redis
			// answers a small hash in insertion order, which the
			// scripts never rely on.
			for _, f := range slices.Sorted(maps.Keys(e.hash)) {
				out = append(out, []byte(f), []byte(e.hash[f]))
			}
		}
		return out
	case "TYPE":
		if len(a) != 1 {
			return errArity(cmd)
		}
		e := ks.get(a[0], now)
		if e == nil {
			return Status("none")
		}
		return Status(typeNames[e.kind])
	case "HEXISTS":
		if len(a) != 2 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kHash)
		if err != nil {
			return err
		}
		if e == nil {
			return int64(0)
		}
		if _, ok := e.hash[a[1]]; ok {
			return int64(1)
		}
		return int64(0)
	case "ZADD":
		return ks.zadd(now, a)
	case "ZREM":
		if len(a) < 2 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kZset)
		if err != nil {
			return err
		}
		if e == nil {
			return int64(0)
		}
		n := int64(0)
		for _, m := range a[1:] {
			if i := zsetFind(e.zset, m); i >= 0 {
				e.zset = append(e.zset[:i], e.zset[i+1:]...)
				n++
			}
		}
		ks.zsetChanged(a[0], e, n > 0, now)
		return n
	case "ZSCORE":
		if len(a) != 2 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kZset)
		if err != nil {
			return err
		}
		if e == nil {
			return nil
		}
		if i := zsetFind(e.zset, a[1]); i >= 0 {
			return []byte(formatScore(e.zset[i].score))
		}
		return nil
	case "ZCARD":
		if len(a) != 1 {
			return errArity(cmd)
		}
		e, err := ks.typed(a[0], now, kZset)
		if err != nil {
			return err
		}
		if e == nil {
			return int64(0)
		}
		return int64(len(e.zset))
	case "ZRANGE":
		return ks.zrange(now, a)
	case "ZRANGEBYSCORE", "ZREMRANGEBYSCORE":
		if len(a) < 3 || (cmd == "ZREMRANGEBYSCORE" && len(a) != 3) {
			return errArity(cmd)
		}
		min, minEx, ok1 := parseBound(a[1])
		max, maxEx, ok2 := parseBound(a[2])
		if !ok1 || !ok2 {
			return errMinMax
		}
		if cmd == "ZRANGEBYSCORE" && len(a) > 3 {
			return errSyntax // WITHSCORES and LIMIT: not used by the library
		}
		e, err := ks.typed(a[0], now, kZset)
		if err != nil {
			return err
		}
		in := func(s float64) bool {
			return (s > min || (!minEx && s == min)) && (s < max || (!maxEx && s == max))
		}
		if cmd == "ZRANGEBYSCORE" {
			out := []any{}
			if e != nil {
				for _, z := range e.zset {
					if in(z.score) {
						out = append(out, []byte(z.member))
					}
				}
			}
			return out
		}
		if e == nil {
			return int64(0)
		}
		kept := e.zset[:0]
		n := int64(0)
		for _, z := range e.zset {
			if in(z.score) {
				n++
				continue
			}
			kept = append(kept, z)
		}
		e.zset = kept
		ks.zsetChanged(a[0], e, n > 0, now)
		return n
	}
	return Error("ERR unknown command '" + strings.ToLower(args[0]) + "'")
}

// typed returns key's live entry, nil when absent, and a WRONGTYPE error
// when it holds another type than k.
func (ks *Keyspace) typed(key string, now int64, k kind) (*entry, any) {
	e := ks.get(key, now)
	if e != nil && e.kind != k {
		return nil, errWrongType
	}
	return e, nil
}

// zsetChanged logs a sorted set changed in place, and deletes it when it
// became empty (as Redis does).
func (ks *Keyspace) zsetChanged(key string, e *entry, changed bool, now int64) {
	if !changed {
		return
	}
	if len(e.zset) == 0 {
		ks.del(key, now)
		return
	}
	ks.touched(key, e)
}

// set is SET key value [NX|XX] [GET] [EX s|PX ms|KEEPTTL].
func (ks *Keyspace) set(now int64, a []string) any {
	if len(a) < 2 {
		return errArity("SET")
	}
	var nx, xx, keep, get bool
	var expireAt int64
	for i := 2; i < len(a); i++ {
		switch opt := strings.ToUpper(a[i]); opt {
		case "NX":
			nx = true
		case "XX":
			xx = true
		case "KEEPTTL":
			keep = true
		case "GET":
			get = true
		case "PX", "EX":
			if i+1 >= len(a) || expireAt != 0 {
				return errSyntax
			}
			i++
			n, err := strconv.ParseInt(a[i], 10, 64)
			if err != nil {
				return errNotInt
			}
			if n <= 0 {
				return Error("ERR invalid expire time in 'set' command")
			}
			if opt == "EX" {
				n *= 1000
			}
			expireAt = now + n
		default:
			return errSyntax
		}
	}
	if (nx && xx) || (keep && expireAt != 0) {
		return errSyntax
	}
	old := ks.get(a[0], now)
	var prev any
	if get {
		if old != nil && old.kind != kString {
			return errWrongType
		}
		if old != nil {
			prev = []byte(old.str)
		}
	}
	if (nx && old != nil) || (xx && old == nil) {
		return prev // nil unless GET
	}
	e := &entry{kind: kString, str: a[1], expireAt: expireAt}
	if keep && old != nil {
		e.expireAt = old.expireAt
	}
	ks.put(a[0], e)
	if get {
		return prev
	}
	return Status("OK")
}

// incr is INCR key.
func (ks *Keyspace) incr(now int64, key string) any {
	e := ks.get(key, now)
	if e == nil {
		e = &entry{kind: kString, str: "0"}
		ks.m[key] = e
	}
	if e.kind != kString {
		return errWrongType
	}
	n, err := strconv.ParseInt(e.str, 10, 64)
	if err != nil || n == math.MaxInt64 {
		return errNotInt
	}
	n++
	e.str = strconv.FormatInt(n, 10)
	ks.touched(key, e)
	return n
}

// zadd is ZADD key [NX|XX] score member [score member ...].
func (ks *Keyspace) zadd(now int64, a []string) any {
	if len(a) < 3 {
		return errArity("ZADD")
	}
	var nx, xx bool
	i := 1
	for ; i < len(a); i++ {
		switch strings.ToUpper(a[i]) {
		case "NX":
			nx = true
			continue
		case "XX":
			xx = true
			continue
		}
		break
	}
	rest := a[i:]
	if len(rest) == 0 || len(rest)%2 != 0 {
		return errSyntax
	}
	if nx && xx {
		return Error("ERR XX and NX options at the same time are not compatible")
	}
	scores := make([]float64, len(rest)/2)
	for j := range scores {
		s, ok := parseScore(rest[2*j])
		if !ok {
			return errNotFloat
		}
		scores[j] = s
	}
	e, err := ks.typed(a[0], now, kZset)
	if err != nil {
		return err
	}
	if e == nil {
		if xx {
			return int64(0)
		}
		e = &entry{kind: kZset}
		ks.m[a[0]] = e
	}
	added, changed := int64(0), false
	for j, s := range scores {
		m := rest[2*j+1]
		if k := zsetFind(e.zset, m); k >= 0 {
			if nx || e.zset[k].score == s {
				continue
			}
			e.zset = append(e.zset[:k], e.zset[k+1:]...)
			e.zset = zsetInsert(e.zset, zmember{score: s, member: m})
			changed = true
			continue
		}
		if xx {
			continue
		}
		e.zset = zsetInsert(e.zset, zmember{score: s, member: m})
		added++
		changed = true
	}
	if len(e.zset) == 0 {
		delete(ks.m, a[0]) // created for nothing
		return added
	}
	if changed {
		ks.touched(a[0], e)
	}
	return added
}

// zrange is ZRANGE key start stop (by rank).
func (ks *Keyspace) zrange(now int64, a []string) any {
	if len(a) < 3 {
		return errArity("ZRANGE")
	}
	if len(a) > 3 {
		return errSyntax // WITHSCORES, BYSCORE, ...: not used by the library
	}
	start, err1 := strconv.ParseInt(a[1], 10, 64)
	stop, err2 := strconv.ParseInt(a[2], 10, 64)
	if err1 != nil || err2 != nil {
		return errNotInt
	}
	e, err := ks.typed(a[0], now, kZset)
	if err != nil {
		return err
	}
	out := []any{}
	if e == nil {
		return out
	}
	n := int64(len(e.zset))
	if start < 0 {
		start += n
	}
	if stop < 0 {
		stop += n
	}
	start = max(start, 0)
	if start > stop || start >= n {
		return out
	}
	stop = min(stop, n-1)
	for _, z := range e.zset[start : stop+1] {
		out = append(out, []byte(z.member))
	}
	return out
}

// parseScore reads a sorted-set score as Redis does.
func parseScore(s string) (float64, bool) {
	switch strings.ToLower(s) {
	case "inf", "+inf":
		return math.Inf(1), true
	case "-inf":
		return math.Inf(-1), true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// parseBound reads a ZRANGEBYSCORE bound: a score, "(" a score for an
// exclusive one.
func parseBound(s string) (v float64, exclusive, ok bool) {
	if strings.HasPrefix(s, "(") {
		exclusive, s = true, s[1:]
	}
	v, ok = parseScore(s)
	return v, exclusive, ok
}

// formatScore formats a score as Redis replies it (ZSCORE).
func formatScore(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == math.Trunc(f) && math.Abs(f) < 1e17:
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 17, 64)
}
