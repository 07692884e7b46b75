// Package master is a simulated Redis master: an in-memory keyspace
// (strings, hashes, sorted sets, expiry by the master's own clock) that
// runs the library's real Lua scripts (gopher-lua, redis.call bound to the
// keyspace), its process (run id, start, persistence, INFO), its disk (an
// AOF fsynced always, every second or never: what a power loss leaves),
// and a replica that receives its writes with a lag (what a failover
// promotes). It knows no time of its own: every method takes the
// simulation's time, and the caller (package sim's network) serialises the
// calls.
package master

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Persistence is a master's AOF setting.
type Persistence struct {
	// AppendOnly: the master keeps an AOF (appendonly yes).
	AppendOnly bool
	// Fsync is its appendfsync: "always", "everysec" or "no".
	Fsync string
}

// String names the persistence as a schedule prints it.
func (p Persistence) String() string {
	if !p.AppendOnly {
		return "none"
	}
	return "aof-" + p.Fsync
}

// write is one write of the keyspace, as replication and the AOF carry it:
// the key's new value (nil: deleted) at a time.
type write struct {
	at  time.Time
	key string
	e   *entry
}

// Master is one simulated master.
type Master struct {
	Name    string
	Version string // redis_version it reports
	Persist Persistence
	Clock   Clock

	ks      *Keyspace
	up      bool
	run     int    // process counter
	runID   string // of the process up now (or last up)
	started int64  // the process's start on its clock (unix ns)

	// disk is what the AOF holds after its last fsync (nil: no AOF);
	// unsynced the writes since (appendfsync everysec or no).
	disk     *Keyspace
	unsynced []write
	lastSync time.Time

	// replica receives the writes lag behind (nil: none); replLog holds
	// the writes not yet applied there.
	replica   *Keyspace
	replLog   []write
	lag       time.Duration
	replicaID string

	nowForLog time.Time // dates the writes of the command running (for the replica)
}

// New returns a master that starts at sim time now with persistence p and
// clock c, and with a replica when lag >= 0.
func New(name string, now time.Time, p Persistence, c Clock, replicaLag time.Duration) *Master {
	m := &Master{Name: name, Version: "7.2.4", Persist: p, Clock: c, lag: -1}
	m.ks = NewKeyspace()
	if p.AppendOnly {
		m.disk = NewKeyspace()
	}
	m.lastSync = now
	m.start(now)
	m.started -= int64(time.Hour) // up for an hour already: a deployment, not a fresh start
	if replicaLag >= 0 {
		m.replica, m.lag = NewKeyspace(), replicaLag
		m.replicaID = m.Name + "-replica"
	}
	m.ks.log = m.logWrite
	return m
}

func (m *Master) start(now time.Time) {
	m.run++
	m.runID = fmt.Sprintf("%s-run%d", m.Name, m.run)
	m.started = m.Clock.Wall(now)
	m.up = true
}

// logWrite passes a write on to the disk and the replica.
func (m *Master) logWrite(key string, e *entry) {
	if m.disk != nil && m.Persist.Fsync != "always" {
		m.unsynced = append(m.unsynced, write{key: key, e: e})
	} else if m.disk != nil {
		m.disk.apply(key, e)
	}
	if m.replica != nil {
		m.replLog = append(m.replLog, write{at: m.nowForLog, key: key, e: e})
	}
}

// Up reports whether the process runs.
func (m *Master) Up() bool { return m.up }

// RunID is the run id of the process up now (or last up).
func (m *Master) RunID() string { return m.runID }

// Started is when the process started, on its own clock (unix ns).
func (m *Master) Started() int64 { return m.started }

// env returns the command environment at sim time now.
func (m *Master) env(now time.Time, publish func(channel, msg string) int64) *Env {
	return &Env{Now: m.Clock.Ms(now), Micro: m.Clock.Micro(now), Publish: publish}
}

// Eval runs the script src at now. publish receives the PUBLISHes.
func (m *Master) Eval(now time.Time, src string, keys, argv []string, publish func(channel, msg string) int64) any {
	m.nowForLog = now
	return m.ks.Eval(m.env(now, publish), src, keys, argv)
}

// Do runs one command at now.
func (m *Master) Do(now time.Time, args []string, publish func(channel, msg string) int64) any {
	m.nowForLog = now
	return m.ks.Do(m.env(now, publish), args)
}

// Info returns the replies to INFO server, INFO persistence and CONFIG GET
// appendfsync at now, as a Node reads them on a new connection.
func (m *Master) Info(now time.Time) (server, persistence, appendfsync string) {
	uptime := floorDiv(m.Clock.Wall(now), 1e9) - floorDiv(m.started, 1e9)
	server = "# Server\r\nredis_version:" + m.Version + "\r\nrun_id:" + m.runID + "\r\nuptime_in_seconds:" + strconv.FormatInt(uptime, 10) + "\r\n"
	aof := "0"
	if m.Persist.AppendOnly {
		aof = "1"
	}
	persistence = "# Persistence\r\naof_enabled:" + aof + "\r\n"
	return server, persistence, m.Persist.Fsync
}

// Fsync writes what the AOF holds to disk (appendfsync everysec's tick).
func (m *Master) Fsync(now time.Time) {
	m.lastSync = now
	if m.disk == nil || !m.up || m.Persist.Fsync != "everysec" {
		return
	}
	if m.Persist.Fsync == "no" {
		return // the kernel's own flush is not modelled: "no" keeps nothing for sure
	}
	for _, w := range m.unsynced {
		m.disk.apply(w.key, w.e)
	}
	m.unsynced = m.unsynced[:0]
}

// Durable reports whether every write made so far is on disk.
func (m *Master) Durable() bool {
	return m.disk != nil && m.Persist.Fsync != "no" && len(m.unsynced) == 0
}

// Replicate applies on the replica the writes made lag or more before now.
func (m *Master) Replicate(now time.Time) {
	if m.replica == nil {
		return
	}
	i := 0
	for ; i < len(m.replLog) && !m.replLog[i].at.Add(m.lag).After(now); i++ {
		m.replica.apply(m.replLog[i].key, m.replLog[i].e)
	}
	m.replLog = append(m.replLog[:0], m.replLog[i:]...)
}

// Lag is the replica's lag (< 0: no replica).
func (m *Master) Lag() time.Duration { return m.lag }

// SetLag changes the replica's lag from now on.
func (m *Master) SetLag(now time.Time, lag time.Duration) {
	m.Replicate(now)
	m.lag = lag
}

// Crash kills the process at now as a power loss does: what was not on
// disk is lost.
func (m *Master) Crash(now time.Time) {
	m.up = false
	switch {
	case m.disk == nil:
		m.ks = NewKeyspace()
	default:
		m.ks = m.disk.Clone()
		m.unsynced = m.unsynced[:0]
	}
	m.ks.log = m.logWrite
	if m.replica != nil {
		m.Replicate(now)
	}
}

// Shutdown stops the process at now keeping every write (SHUTDOWN SAVE,
// or a SIGKILL that the page cache survives).
func (m *Master) Shutdown(now time.Time) {
	m.Replicate(now)
	m.up = false
}

// Restart starts a new process (a new run id) at now with what the
// master kept. Its replica syncs again from it, as a Redis replica does
// from a master that came back under a new run id: it then holds what the
// master kept, not what it had received before the master lost it (a
// replica that kept both would be one no real failover promotes).
func (m *Master) Restart(now time.Time) {
	if m.disk != nil {
		// The restarted process rewrites what it loaded as its AOF.
		m.disk = m.ks.Clone()
		m.unsynced = m.unsynced[:0]
	}
	if m.replica != nil {
		m.replica = m.ks.Clone()
		m.replLog = m.replLog[:0]
	}
	m.start(now)
}

// Failover promotes the replica at now: the master's data becomes what the
// replica had received, under a new run id (a replica's process, started
// when the master did), and a new replica follows it with the same lag.
// It reports false when there is no replica.
func (m *Master) Failover(now time.Time) bool {
	if m.replica == nil {
		return false
	}
	m.Replicate(now)
	m.ks = m.replica
	m.ks.log = m.logWrite
	m.replLog = m.replLog[:0]
	m.replica = m.ks.Clone()
	if m.disk != nil {
		m.disk = m.ks.Clone()
		m.unsynced = m.unsynced[:0]
	}
	m.run++
	m.runID = fmt.Sprintf("%s-promoted%d", m.Name, m.run)
	m.up = true
	return true
}

// Dump returns the live keys whose name has prefix at now.
func (m *Master) Dump(now time.Time, prefix string) []Item {
	return m.ks.Dump(prefix, m.Clock.Ms(now))
}

// Item returns key at now, as Dump lists it, and whether it exists.
func (m *Master) Item(now time.Time, key string) (Item, bool) {
	return m.ks.Item(key, m.Clock.Ms(now))
}

// Keyspace returns the master's data (for direct reads by the checks).
func (m *Master) Keyspace() *Keyspace { return m.ks }

// Holds reports whether the string key holds value at now, and when (on
// the master's clock, unix ms) it expires: 0 for never.
func (m *Master) Holds(now time.Time, key, value string) (bool, int64) {
	e := m.ks.get(key, m.Clock.Ms(now))
	if e == nil || e.kind != kString || e.str != value {
		return false, 0
	}
	return true, e.expireAt
}

// HashHas reports whether the hash key has field at now, and its expiry.
func (m *Master) HashHas(now time.Time, key, field string) (bool, int64) {
	e := m.ks.get(key, m.Clock.Ms(now))
	if e == nil || e.kind != kHash {
		return false, 0
	}
	_, ok := e.hash[field]
	return ok, e.expireAt
}

// ZScore returns member's score in the sorted set key at now, and whether
// it is there.
func (m *Master) ZScore(now time.Time, key, member string) (float64, bool) {
	e := m.ks.get(key, m.Clock.Ms(now))
	if e == nil || e.kind != kZset {
		return 0, false
	}
	if i := zsetFind(e.zset, member); i >= 0 {
		return e.zset[i].score, true
	}
	return 0, false
}

// Describe is a one-line account of the master for reports.
func (m *Master) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s up=%v", m.Name, m.Persist, m.up)
	if m.replica != nil {
		fmt.Fprintf(&b, " replica-lag=%v", m.lag)
	}
	return b.String()
}

// HashGet returns field of the hash key at now.
func (m *Master) HashGet(now time.Time, key, field string) (string, bool) {
	e := m.ks.get(key, m.Clock.Ms(now))
	if e == nil || e.kind != kHash {
		return "", false
	}
	v, ok := e.hash[field]
	return v, ok
}

// ExpireAt returns key's expiry at now (master unix ms, 0 for none), and
// whether key exists.
func (m *Master) ExpireAt(now time.Time, key string) (int64, bool) {
	e := m.ks.get(key, m.Clock.Ms(now))
	if e == nil {
		return 0, false
	}
	return e.expireAt, true
}

// Reconfigure changes the persistence of a master that is down: it will
// restart with p (the AOF it had, if any, is what the new process loads).
func (m *Master) Reconfigure(p Persistence) {
	m.Persist = p
	switch {
	case p.AppendOnly && m.disk == nil:
		m.disk = m.ks.Clone()
	case !p.AppendOnly:
		m.disk = nil
	}
	m.unsynced = m.unsynced[:0]
}
