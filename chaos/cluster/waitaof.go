package cluster

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// WAITAOF, which durable grants need (redlock.Durability.Local), came in
// Redis 7.2; every Valkey has it (Valkey forked from Redis 7.2.4). Debian
// 12 ships Redis 7.0, so the scenarios about durable grants look for a
// server that has it: the one the run names, else valkey-server.

// WaitAOFServer returns the server binary for a local cluster whose masters
// must answer WAITAOF: preferred (a name on PATH or a path, "" for
// Config.ServerBinary's default) when it has WAITAOF, else valkey-server
// when it is installed; or an error that says why neither will do.
func WaitAOFServer(preferred string) (string, error) {
	if preferred == "" {
		preferred = Config{}.ServerBinary()
	}
	why := []string{}
	for _, bin := range []string{preferred, "valkey-server"} {
		ok, version, err := hasWaitAOF(bin)
		switch {
		case err != nil:
			why = append(why, err.Error())
		case ok:
			return bin, nil
		default:
			why = append(why, fmt.Sprintf("%s is %s", bin, version))
		}
	}
	return "", fmt.Errorf("%w: no server with WAITAOF (Redis 7.2+ or Valkey) found (%s); install valkey-server (scripts/ensure-valkey.sh)", ErrUnsupported, strings.Join(why, "; "))
}

// serverVersion reads "Redis server v=7.0.15 ..." and "Valkey server
// v=8.0.1 ...".
var serverVersion = regexp.MustCompile(`^(\w+) server v=(\d+)\.(\d+)`)

// hasWaitAOF reports whether the server binary bin answers WAITAOF, from
// its --version, which it returns as "Redis 7.0" or the like.
func hasWaitAOF(bin string) (ok bool, version string, err error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return false, "", fmt.Errorf("cluster: %s --version: %w", bin, err)
	}
	m := serverVersion.FindSubmatch(out)
	if m == nil {
		return false, "", fmt.Errorf("cluster: %s --version: unexpected %q", bin, out)
	}
	name := string(m[1])
	major, _ := strconv.Atoi(string(m[2]))
	minor, _ := strconv.Atoi(string(m[3]))
	version = fmt.Sprintf("%s %d.%d", name, major, minor)
	if name == "Valkey" {
		return true, version, nil
	}
	return major > 7 || major == 7 && minor >= 2, version, nil
}

// WAITAOF's local count means "fsynced to the AOF". Under appendfsync
// everysec, Valkey (8.0.1 here) answers it once the write is in the AOF
// file, before the fsync: flushAppendOnlyFile marks everything fsynced
// when its buffer is empty and the next fsync is not due yet. Redis fixed
// that code in 8.0 (redis/redis#13793). A grant confirmed that way
// survives a killed server process (the page cache keeps the file), not a
// power loss within the second.

// WaitAOFEarly reports whether the everysec node n acknowledges a write's
// WAITAOF before any fsync could have covered it: right after a Sync the
// node's next fsync is at least a second away, so a WAITAOF of a write
// made then that returns within that second was not waiting for an fsync.
// It returns how long the WAITAOF took.
func WaitAOFEarly(ctx context.Context, n Node) (early bool, took time.Duration, err error) {
	s, err := Sync(ctx, n)
	if err != nil {
		return false, 0, err
	}
	start := time.Now()
	replies, err := doAll(ctx, n.Addr(), []any{"SET", fsyncBarrier, start.UnixNano()}, []any{"WAITAOF", 1, 0, 3000})
	took = time.Since(start)
	if err != nil {
		return false, took, fmt.Errorf("cluster: WAITAOF on %s: %w", n.Name(), err)
	}
	counts, err := redis.Ints(replies[1], nil)
	if err != nil || len(counts) != 2 {
		return false, took, fmt.Errorf("cluster: WAITAOF on %s: %v %v", n.Name(), replies[1], err)
	}
	return counts[0] == 1 && time.Now().Before(s.at.Add(time.Second)), took, nil
}
