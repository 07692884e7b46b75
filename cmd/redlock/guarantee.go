package main

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/quorumlock/quorumlock/pool"
)

// The guarantee a master gives the locks it grants (doctor), from the
// strongest:
const (
	// Every grant is on disk before the master acknowledges it: AOF with
	// appendfsync always. A restart loses no lock.
	guaranteeConfig = "durable by configuration"
	// AOF is on, with a laxer fsync, and the server has WAITAOF (Redis
	// 7.2 and later, Valkey): a grant is durable once WAITAOF confirms it
	// reached the disk, which the library's durable grants wait for.
	guaranteeWaitAOF = "durable by WAITAOF"
	// No durable persistence: after a restart the master has forgotten
	// what it granted. Safe only while it grants nothing until every lock
	// it may have forgotten expired: the client's restart guard, or a
	// restart delayed by the longest TTL.
	guaranteeGuard = "restart guard only"
	// The master may lose a lock while it is held, restart or not: it
	// evicts keys, is a replica, or has replicas that a failover promotes
	// without the lock.
	guaranteeNone = "none"
)

// guarantee says which guarantee m gives, and why.
func guarantee(m masterHealth) (string, string) {
	switch {
	case !m.Answers:
		return unknown, "does not answer"
	case m.Role != "master" && m.Role != unknown:
		return guaranteeNone, "a replica: it takes its data from its master, and what it grants is lost at the next sync or promotion"
	case m.MaxmemoryPolicy != "noeviction" && m.MaxmemoryPolicy != unknown:
		return guaranteeNone, fmt.Sprintf("maxmemory-policy %s may evict a lock key while it is held (every lock key has a TTL)", m.MaxmemoryPolicy)
	case m.Replicas > 0:
		return guaranteeNone, fmt.Sprintf("a failover to one of its %d replica(s), which replicate asynchronously, can lose a granted lock", m.Replicas)
	case m.Role == unknown || m.MaxmemoryPolicy == unknown || m.Replicas < 0:
		return unknown, "could not read the replication role or the eviction policy"
	case m.AppendOnly == "yes" && m.AppendFsync == "always":
		return guaranteeConfig, "AOF with appendfsync always: every grant is on disk before it is acknowledged"
	case m.AppendOnly == "yes" && m.AppendFsync == "no":
		return guaranteeGuard, "AOF with appendfsync no: the server never fsyncs the AOF, so WAITAOF confirms nothing and a crash loses any number of grants; the client's restart guard (or a restart delayed by the longest TTL) keeps it safe" + guardCaveat(m)
	case m.AppendOnly == "yes" && m.AppendFsync != unknown && m.WaitAOF == "yes":
		return guaranteeWaitAOF, fmt.Sprintf("AOF with appendfsync %s, and the server has WAITAOF: a grant is durable once WAITAOF confirms it (the library's durable grants)", m.AppendFsync)
	case m.AppendOnly == unknown || (m.AppendOnly == "yes" && (m.AppendFsync == unknown || m.WaitAOF == unknown)):
		return unknown, "could not read appendonly, appendfsync or whether the server has WAITAOF"
	case m.AppendOnly == "yes":
		return guaranteeGuard, fmt.Sprintf("AOF with appendfsync %s and no WAITAOF (%s %s): a crash loses the last grants; the client's restart guard (or a restart delayed by the longest TTL) keeps it safe", m.AppendFsync, m.Server, m.Version) + guardCaveat(m)
	}
	return guaranteeGuard, "AOF is off: a restart forgets every grant; the client's restart guard (or a restart delayed by the longest TTL) keeps it safe" + guardCaveat(m)
}

// guardCaveat says, for a master that only the restart guard keeps safe,
// that this client cannot apply it (it cannot read the master's process).
func guardCaveat(m masterHealth) string {
	if m.Identity != "refused" {
		return ""
	}
	return " (but this client cannot read its process, so the library refuses its grants: see identity)"
}

// serverOf reads the server's name and version from INFO: Valkey says
// server_name:valkey and valkey_version (its redis_version is the Redis
// version it is compatible with); Redis says redis_version only.
func serverOf(info map[string]string) (server, version string) {
	if info["server_name"] == "valkey" {
		return "valkey", cmp.Or(info["valkey_version"], unknown)
	}
	if v, ok := info["redis_version"]; ok {
		return cmp.Or(info["server_name"], "redis"), v
	}
	return unknown, unknown
}

// waitAOF says whether the server has WAITAOF ("yes", "no" or "unknown"):
// COMMAND INFO WAITAOF answers [nil] for a command it lacks; when COMMAND
// is refused, the version tells (Redis 7.2 and later, every Valkey).
func waitAOF(ctx context.Context, n *pool.Node, server, version string) string {
	if reply, err := n.Do(ctx, "COMMAND", "INFO", "WAITAOF"); err == nil {
		if list, ok := reply.([]any); ok && len(list) == 1 {
			if list[0] == nil {
				return "no"
			}
			return "yes"
		}
	}
	switch server {
	case "valkey":
		return "yes"
	case "redis":
		major, minor, ok := majorMinor(version)
		switch {
		case !ok:
			return unknown
		case major > 7 || (major == 7 && minor >= 2):
			return "yes"
		}
		return "no"
	}
	return unknown
}

// majorMinor reads "7.2.4" as 7 and 2.
func majorMinor(v string) (int, int, bool) {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return major, minor, err1 == nil && err2 == nil
}
