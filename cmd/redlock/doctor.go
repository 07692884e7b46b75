package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/pool"
	"github.com/quorumlock/quorumlock/redlock"
)

const doctorUsage = `usage: redlock doctor [flags]

Check every master against the conditions Redlock's safety rests on, and
say in plain words which one each master breaks:
  - AOF with appendfsync always (a master that restarts without every
    acknowledged write can grant a lock a second time);
  - maxmemory-policy noeviction (any other policy may evict lock keys, all
    of which have a TTL, or fencing counters);
  - no replication (a failover to an asynchronous replica can lose a lock);
  - a server clock within the drift allowance (ttl*drift-factor + 2ms) of
    the local clock;
  - a master whose process the client can read (INFO allowed for its user:
    the restart guard needs it).
A setting that cannot be read (CONFIG renamed or refused) is "unknown".
It names each master's server (Redis or Valkey, and its version) and the
guarantee it gives the locks it grants:
  durable by configuration  AOF with appendfsync always
  durable by WAITAOF        AOF with appendfsync everysec, and the server has
                            WAITAOF (Redis 7.2+, Valkey): grants are durable
                            once WAITAOF confirms them (the library's
                            durable grants)
  restart guard only        no durable persistence (AOF off, appendfsync no,
                            or everysec without WAITAOF): after a restart it
                            must grant nothing until the locks it forgot
                            expired (the client's restart guard, or a
                            delayed restart)
  none                      it may lose a held lock anyway: eviction, a
                            replica, or replicas a failover would promote
and how many failed masters the set tolerates (N - quorum) and how many
more may fail now.
It says, per master, what the library enforces through this command's
client (pool.Node): whether the master's process (run id, uptime,
persistence) can be read on every connection, which the restart guard
needs (an ACL user without +info cannot: every grant of the master is
refused; the missing permission is named); its restart-guard record
(registered run, persistence, longest TTL) and whether clients count its
grants or hold them back after a restart, and for how long; and whether
durable confirmations (WAITAOF) are available, or why not.

Flags:
  --ttl DURATION          the TTL whose drift allowance the skew is held
                          against (default 30s)
  --drift-factor F        as redlock.Config.DriftFactor (default 0.01)
` + prefixUsage + commonUsage + `
Exit status: 0 when every master answers and meets every condition; 1 when
any master breaks one or does not answer; 69 when fewer than a quorum
answer; 64 for bad usage or a bad node list.

Example:
  redlock doctor --nodes redis-a:6379,redis-b:6379,redis-c:6379
`

// doctorReport is what "doctor --json" prints.
type doctorReport struct {
	Quorum    int `json:"quorum"`
	Answering int `json:"answering"`
	// Tolerates is how many failed masters the set tolerates and still
	// grants locks: N - quorum. MoreMayFail is how many more may fail
	// now: answering - quorum (negative when fewer than a quorum answer).
	Tolerates   int `json:"tolerates"`
	MoreMayFail int `json:"more_may_fail"`
	// Guarantees counts the masters giving each guarantee (see the
	// masters' guarantee).
	Guarantees       map[string]int `json:"guarantees"`
	DriftAllowanceMs float64        `json:"drift_allowance_ms"`
	OK               bool           `json:"ok"`
	Masters          []masterHealth `json:"masters"`
	// Prefix is the key prefix whose restart-guard records were read
	// (absent when empty). GuardRecords counts the masters that have
	// one, GuardLongestTTLMs is the longest TTL recorded on any, and
	// GuardHeldBack counts the masters whose grants clients hold back now
	// (restarted within the longest TTL).
	Prefix            string `json:"prefix,omitempty"`
	GuardRecords      int    `json:"guard_records"`
	GuardLongestTTLMs int64  `json:"guard_longest_ttl_ms"`
	GuardHeldBack     int    `json:"guard_held_back"`
}

// masterHealth is one master's findings. Unknown settings are "unknown".
type masterHealth struct {
	Addr            string  `json:"addr"`
	Answers         bool    `json:"answers"`
	Error           string  `json:"error,omitempty"`
	RoundTripMs     float64 `json:"round_trip_ms"`
	Server          string  `json:"server"`             // "redis", "valkey" or "unknown"
	Version         string  `json:"version"`            // the server's own (valkey_version for Valkey)
	WaitAOF         string  `json:"waitaof"`            // the server has WAITAOF: "yes", "no", "unknown"
	Role            string  `json:"role"`               // "master", "slave" or "unknown"
	Replicas        int     `json:"connected_replicas"` // -1: unknown
	AppendOnly      string  `json:"appendonly"`
	AppendFsync     string  `json:"appendfsync"`
	MaxmemoryPolicy string  `json:"maxmemory_policy"`
	SkewMs          float64 `json:"clock_skew_ms"` // server clock minus local clock
	// Problems are the broken conditions, each with a stable check name:
	// "unreachable", "persistence", "eviction", "replication", "clock".
	Problems []finding `json:"problems"`
	// Unknown are the checks that could not be made.
	Unknown []finding `json:"unknown"`
	// Guarantee is what the master guarantees the locks it grants:
	// "durable by configuration", "durable by WAITAOF", "restart guard
	// only", "none" or "unknown"; GuaranteeDetail says why.
	Guarantee       string `json:"guarantee"`
	GuaranteeDetail string `json:"guarantee_detail"`

	// Identity is whether this command's client (pool.Node, which reads
	// the master's process on every new connection: INFO server and
	// persistence, CONFIG GET appendfsync) knows the master's process,
	// which the restart guard needs: "read", "refused" or "unknown" (no
	// answer). IdentityDetail says what it read, or why not;
	// MissingPermissions are the ACL permissions the client's user lacks
	// for it ("+info", "+config|get").
	Identity           string   `json:"identity"`
	IdentityDetail     string   `json:"identity_detail"`
	MissingPermissions []string `json:"missing_permissions"`
	RunID              string   `json:"run_id,omitempty"` // the running process
	UptimeS            int64    `json:"uptime_s"`         // -1: unknown
	// Guard is the master's restart-guard record (null: none; see
	// inspect) and GuardError why it could not be read. GuardVerdict is
	// what every client makes of it: "registered" (it names the running
	// process), "kept every write" (restarted persisting every write),
	// "held back" (restarted, or lost its record: its grants do not count
	// for GuardHeldBackMs more), "up long enough" (restarted, and up for
	// the longest TTL since), "fresh deployment" (no master has a record)
	// or "unknown"; GuardDetail says it in words.
	Guard           *guardRecord `json:"guard"`
	GuardError      string       `json:"guard_error,omitempty"`
	GuardVerdict    string       `json:"guard_verdict"`
	GuardHeldBackMs int64        `json:"guard_held_back_ms"`
	GuardDetail     string       `json:"guard_detail"`
	// What the library enforces on the master through this command's
	// client: RestartGuard "applies", "cannot apply" (the process cannot
	// be read: the library refuses its grants) or "unknown";
	// DurableConfirmations, whether it can confirm a grant on the
	// master's disk (Config.Durability{Local}: WAITAOF on an AOF that is
	// fsynced), "yes", "no" or "unknown", with DurableDetail saying why;
	// Enforces, all of it in one line.
	RestartGuard         string `json:"restart_guard"`
	DurableConfirmations string `json:"durable_confirmations"`
	DurableDetail        string `json:"durable_detail"`
	Enforces             string `json:"enforces"`

	id *redlock.Identity // the master's process as the client read it; nil: unknown
}

type finding struct {
	Check  string `json:"check"`
	Detail string `json:"detail"`
}

const unknown = "unknown"

func cmdDoctor(args []string, e env) int {
	fs, c := newFlags("doctor", 2*time.Second)
	ttl := duration(30 * time.Second)
	driftFactor := redlock.DefaultDriftFactor
	fs.Var(&ttl, "ttl", "")
	fs.Float64Var(&driftFactor, "drift-factor", driftFactor, "")
	kf := addKeyFlags(fs)
	pos, tail, err := parseArgs(fs, args, 0)
	if code, ok := handleParse(e, "doctor", doctorUsage, err); !ok {
		return code
	}
	if len(pos)+len(tail) > 0 {
		return e.usageError("doctor", fmt.Errorf("unexpected argument %q", append(pos, tail...)[0]))
	}
	if driftFactor < 0 || driftFactor >= 1 {
		return e.usageError("doctor", fmt.Errorf("drift factor %v outside [0, 1)", driftFactor))
	}
	cfgs, err := nodeList(c.nodes, e)
	if err != nil {
		return e.failf(exitUsage, "doctor: %v", err)
	}
	ms := connect(cfgs)
	defer ms.Close()
	allowance := clock.Drift(time.Duration(ttl), driftFactor)
	prefix := kf.resolve(fs, e)
	rep := doctorReport{Quorum: ms.quorum(), DriftAllowanceMs: ms2(allowance), Masters: make([]masterHealth, len(ms)), Prefix: prefix}
	ms.each(context.Background(), time.Duration(c.nodeTimeout), func(ctx context.Context, i int, n *pool.Node) {
		m := examine(ctx, n, cfgs[i].Username, allowance, prefix)
		m.Guarantee, m.GuaranteeDetail = guarantee(m)
		enforcement(&m)
		rep.Masters[i] = m
	})
	for _, m := range rep.Masters {
		if m.Guard != nil {
			rep.GuardRecords++
			rep.GuardLongestTTLMs = max(rep.GuardLongestTTLMs, m.Guard.TTLMs)
		}
	}
	now := time.Now()
	rep.OK = true
	rep.Guarantees = map[string]int{}
	for i := range rep.Masters {
		m := &rep.Masters[i]
		judgeGuard(m, rep.GuardRecords > 0, time.Duration(rep.GuardLongestTTLMs)*time.Millisecond, driftFactor, now)
		if m.GuardVerdict == verdictHeldBack {
			rep.GuardHeldBack++
		}
		if m.Answers {
			rep.Answering++
		}
		rep.OK = rep.OK && len(m.Problems) == 0
		rep.Guarantees[m.Guarantee]++
	}
	rep.Tolerates, rep.MoreMayFail = len(ms)-rep.Quorum, rep.Answering-rep.Quorum
	if c.json {
		writeJSON(e.stdout, rep)
	} else {
		printDoctor(e, rep)
	}
	switch {
	case rep.Answering < rep.Quorum:
		return e.failf(exitUnavailable, "doctor: only %d of %d masters answer, a quorum needs %d", rep.Answering, len(ms), rep.Quorum)
	case !rep.OK:
		return exitConflict
	}
	return exitOK
}

func ms2(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// examine asks one master everything doctor checks; user is the client's
// ACL user, prefix the key prefix of the restart guard's record.
func examine(ctx context.Context, n *pool.Node, user string, allowance time.Duration, prefix string) masterHealth {
	m := masterHealth{Addr: n.Addr(), Server: unknown, Version: unknown, WaitAOF: unknown, Role: unknown, Replicas: -1,
		AppendOnly: unknown, AppendFsync: unknown, MaxmemoryPolicy: unknown, Problems: []finding{}, Unknown: []finding{},
		Identity: unknown, IdentityDetail: "does not answer", MissingPermissions: []string{}, UptimeS: -1}
	problem := func(check, format string, args ...any) {
		m.Problems = append(m.Problems, finding{check, fmt.Sprintf(format, args...)})
	}
	start := time.Now()
	if _, err := n.Do(ctx, "PING"); err != nil {
		m.Error = err.Error()
		problem("unreachable", "does not answer: %v", err)
		return m
	}
	m.Answers, m.RoundTripMs = true, ms2(time.Since(start))

	info := map[string]string{}
	reply, infoErr := n.Do(ctx, "INFO")
	if infoErr == nil {
		info = parseInfo(reply)
	}
	m.Server, m.Version = serverOf(info)
	m.WaitAOF = waitAOF(ctx, n, m.Server, m.Version)
	if v, ok := info["role"]; ok {
		m.Role = v
	}
	if v, err := strconv.Atoi(info["connected_slaves"]); err == nil {
		m.Replicas = v
	}
	if v, err := strconv.ParseInt(info["uptime_in_seconds"], 10, 64); err == nil {
		m.UptimeS = v
	}
	var configErr error
	m.AppendOnly, _ = configGet(ctx, n, "appendonly", func() string {
		return map[string]string{"1": "yes", "0": "no"}[info["aof_enabled"]]
	})
	m.AppendFsync, configErr = configGet(ctx, n, "appendfsync", func() string { return "" })
	m.MaxmemoryPolicy, _ = configGet(ctx, n, "maxmemory-policy", func() string { return info["maxmemory_policy"] })
	readIdentity(&m, n, user, infoErr, configErr)
	var err error
	if m.Guard, err = readGuard(ctx, n, prefix); err != nil {
		m.GuardError = err.Error()
	}

	switch {
	case m.AppendOnly == "no":
		problem("persistence", "AOF is off (appendonly no): after a restart it forgets the locks it granted and can grant them again; set appendonly yes and appendfsync always")
	case m.AppendFsync == "no":
		problem("persistence", "appendfsync is no: the server never fsyncs the AOF (the kernel writes it when it likes), so a crash loses any number of acknowledged lock writes; set appendfsync always")
	case m.AppendFsync != unknown && m.AppendFsync != "always":
		problem("persistence", "appendfsync is %s, not always: a crash loses the last acknowledged lock writes; set appendfsync always", m.AppendFsync)
	}
	if m.AppendOnly == unknown || (m.AppendOnly == "yes" && m.AppendFsync == unknown) {
		m.Unknown = append(m.Unknown, finding{"persistence", "could not read appendonly/appendfsync (CONFIG GET refused or renamed)"})
	}
	switch m.MaxmemoryPolicy {
	case unknown:
		m.Unknown = append(m.Unknown, finding{"eviction", "could not read maxmemory-policy"})
	case "noeviction":
	default:
		problem("eviction", "maxmemory-policy is %s: under memory pressure it may evict lock keys (they all have a TTL) and let a second holder in; set noeviction", m.MaxmemoryPolicy)
	}
	switch {
	case m.Role == unknown:
		m.Unknown = append(m.Unknown, finding{"replication", "could not read the replication role"})
	case m.Role != "master":
		problem("replication", "is a replica (role %s): Redlock needs independent masters", m.Role)
	case m.Replicas > 0:
		problem("replication", "has %d replica(s): a failover to an asynchronously replicated replica can lose a granted lock", m.Replicas)
	}
	if skew, err := clockSkew(ctx, n); err != nil {
		m.Unknown = append(m.Unknown, finding{"clock", fmt.Sprintf("TIME failed: %v", err)})
	} else {
		m.SkewMs = ms2(skew)
		if skew > allowance || -skew > allowance {
			problem("clock", "its clock is %v off the local clock, beyond the drift allowance %v", skew.Round(time.Millisecond), allowance)
		}
	}
	return m
}

// configGet reads one CONFIG setting; when CONFIG is refused (renamed,
// disabled or forbidden by an ACL: err is the refusal) it falls back to
// fallback (from INFO), and to "unknown".
func configGet(ctx context.Context, n *pool.Node, name string, fallback func() string) (_ string, err error) {
	reply, err := n.Do(ctx, "CONFIG", "GET", name)
	if err == nil {
		if kv, ok := reply.([]any); ok && len(kv) == 2 {
			if v, ok := kv[1].([]byte); ok {
				return string(v), nil
			}
		}
	}
	if v := fallback(); v != "" {
		return v, err
	}
	return unknown, err
}

// parseInfo reads INFO's "name:value" lines.
func parseInfo(reply any) map[string]string {
	b, _ := reply.([]byte)
	out := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// clockSkew is the master's clock (TIME) minus the local clock at the
// middle of the round trip.
func clockSkew(ctx context.Context, n *pool.Node) (time.Duration, error) {
	before := time.Now()
	reply, err := n.Do(ctx, "TIME")
	after := time.Now()
	if err != nil {
		return 0, err
	}
	parts, ok := reply.([]any)
	if !ok || len(parts) != 2 {
		return 0, errors.New("unexpected TIME reply")
	}
	sec, err1 := strconv.ParseInt(string(asBytes(parts[0])), 10, 64)
	usec, err2 := strconv.ParseInt(string(asBytes(parts[1])), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("unexpected TIME reply")
	}
	server := time.Unix(sec, usec*1000)
	local := before.Add(after.Sub(before) / 2)
	return server.Sub(local), nil
}

func asBytes(v any) []byte {
	switch v := v.(type) {
	case []byte:
		return v
	case string:
		return []byte(v)
	}
	return nil
}

func printDoctor(e env, rep doctorReport) {
	w := e.stdout
	for _, m := range rep.Masters {
		if !m.Answers {
			fmt.Fprintf(w, "%s: DOES NOT ANSWER: %s\n", m.Addr, m.Error)
			continue
		}
		replicas := unknown
		if m.Replicas >= 0 {
			replicas = strconv.Itoa(m.Replicas)
		}
		fmt.Fprintf(w, "%s: %s %s, round trip %.2fms, role %s, replicas %s, appendonly %s, appendfsync %s, maxmemory-policy %s, clock skew %+.1fms\n",
			m.Addr, m.Server, m.Version, m.RoundTripMs, m.Role, replicas, m.AppendOnly, m.AppendFsync, m.MaxmemoryPolicy, m.SkewMs)
		for _, p := range m.Problems {
			fmt.Fprintf(w, "  UNSAFE (%s): %s\n", p.Check, p.Detail)
		}
		for _, u := range m.Unknown {
			fmt.Fprintf(w, "  unknown (%s): %s\n", u.Check, u.Detail)
		}
		if m.Identity == "read" {
			fmt.Fprintf(w, "  identity: %s\n", m.IdentityDetail)
		}
		if m.GuardError != "" {
			fmt.Fprintf(w, "  restart guard's record: ERROR: %s\n", m.GuardError)
		} else {
			fmt.Fprintf(w, "  restart guard's record: %s\n", describeGuard(m.Guard, m.RunID))
		}
		fmt.Fprintf(w, "  restart guard: %s: %s\n", m.GuardVerdict, m.GuardDetail)
		fmt.Fprintf(w, "  guarantee: %s: %s\n", m.Guarantee, m.GuaranteeDetail)
		fmt.Fprintf(w, "  this client (pool.Node) enforces: %s\n", m.Enforces)
	}
	fmt.Fprintf(w, "the set tolerates %d failed master(s) of %d (quorum %d); %d answer, so %s\n",
		rep.Tolerates, len(rep.Masters), rep.Quorum, rep.Answering, moreMayFail(rep.MoreMayFail))
	var gs []string
	for _, g := range []string{guaranteeConfig, guaranteeWaitAOF, guaranteeGuard, guaranteeNone, unknown} {
		if c := rep.Guarantees[g]; c > 0 {
			gs = append(gs, fmt.Sprintf("%d %s", c, g))
		}
	}
	fmt.Fprintf(w, "guarantees: %s\n", strings.Join(gs, ", "))
	guard := fmt.Sprintf("restart guard: records on %d of %d masters", rep.GuardRecords, len(rep.Masters))
	if rep.Prefix != "" {
		guard += fmt.Sprintf(" (prefix %q)", rep.Prefix)
	}
	if rep.GuardRecords > 0 {
		guard += ", longest TTL recorded " + ttlString(rep.GuardLongestTTLMs)
	}
	if rep.GuardHeldBack > 0 {
		guard += fmt.Sprintf("; %d held back now (restarted: their grants do not count yet)", rep.GuardHeldBack)
	}
	fmt.Fprintln(w, guard)
	if rep.OK {
		fmt.Fprintf(w, "ok: every master meets Redlock's safety conditions (quorum %d of %d)\n", rep.Quorum, len(rep.Masters))
	} else {
		fmt.Fprintf(w, "NOT SAFE: see above (quorum %d of %d, %d answering)\n", rep.Quorum, len(rep.Masters), rep.Answering)
	}
}

// moreMayFail says how many more masters may fail.
func moreMayFail(d int) string {
	switch {
	case d < 0:
		return "fewer than a quorum answer: no lock can be granted"
	case d == 0:
		return "no further master may fail"
	case d == 1:
		return "1 more may fail"
	}
	return fmt.Sprintf("%d more may fail", d)
}
