package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/clock"
	"github.com/quorumlock/quorumlock/pool"
)

// What doctor says of the client side: what the library can enforce on
// each master through this command's client, pool.Node, which reads the
// master's process (INFO server and persistence, CONFIG GET appendfsync)
// on every new connection. The restart guard needs that reading (without
// it the library refuses the master's grants: ErrInvalid), and judges the
// master by its restart-guard record (guardrecord.go); durable
// confirmations (Config.Durability) need WAITAOF on an AOF that is
// fsynced.

// The restart guard's verdict on a master, as every client of the library
// reaches it (redlock/guard.go), in doctor's guard_verdict.
const (
	verdictRegistered = "registered"       // the record names the running process
	verdictKept       = "kept every write" // restarted, persisting every write before and since
	verdictHeldBack   = "held back"        // restarted (or lost its record): grants do not count yet
	verdictUpLong     = "up long enough"   // restarted, up for the longest TTL since: the next client registers it
	verdictFresh      = "fresh deployment" // no master has a record
)

// The restart guard on a master through this command's client, in
// doctor's restart_guard.
const (
	guardApplies = "applies"      // the master's process is read on every connection
	guardCannot  = "cannot apply" // it is not (INFO refused): the library refuses the master's grants
)

// noPerm reports whether err is an ACL refusal.
func noPerm(err error) bool { return err != nil && strings.Contains(err.Error(), "NOPERM") }

// readIdentity fills m's identity fields from what n read of its master
// (n.Identity, as the library reads it) and the refusals doctor met
// itself: infoErr, INFO's, and configErr, CONFIG GET's. user is the
// client's ACL user ("" for default).
func readIdentity(m *masterHealth, n *pool.Node, user string, infoErr, configErr error) {
	if user == "" {
		user = "default"
	}
	grant := func(perm string) string {
		m.MissingPermissions = append(m.MissingPermissions, perm)
		return fmt.Sprintf("the ACL of user %s lacks %s (ACL SETUSER %s %s)", user, perm, user, perm)
	}
	id, err := n.Identity()
	if err != nil {
		m.Identity = "refused"
		why := err.Error()
		switch {
		case noPerm(infoErr):
			why = grant("+info") + ": " + infoErr.Error()
		case infoErr != nil:
			why = "INFO fails (renamed or disabled?): " + infoErr.Error()
		}
		m.IdentityDetail = "the master's process cannot be read: " + why
		m.Problems = append(m.Problems, finding{"identity", m.IdentityDetail +
			"; without it the restart guard cannot apply, and the library refuses this master's grants (ErrInvalid: redlock run exits 64) unless the guard is off (Config.RestartGuard < 0, or Config.FsyncAlways)"})
		return
	}
	m.Identity, m.id, m.RunID = "read", &id, id.RunID
	m.IdentityDetail = fmt.Sprintf("read on every new connection: run id %s", id.RunID)
	if m.UptimeS >= 0 {
		m.IdentityDetail += fmt.Sprintf(", up %v", time.Duration(m.UptimeS)*time.Second)
	}
	if configErr != nil {
		why := "CONFIG GET appendfsync fails: " + configErr.Error()
		if noPerm(configErr) {
			why = grant("+config|get")
		}
		m.IdentityDetail += "; " + why + ": the library counts the master as not persisting every write, so the restart guard holds it back after every restart, even under appendfsync always"
	}
}

// judgeGuard says what clients make of master m's restart-guard record,
// as redlock/guard.go decides: used, some master that answered has a
// record; longest, the longest TTL recorded on any.
func judgeGuard(m *masterHealth, used bool, longest time.Duration, driftFactor float64, now time.Time) {
	m.GuardVerdict = unknown
	switch {
	case !m.Answers:
		m.GuardDetail = "does not answer"
		return
	case m.GuardError != "":
		m.GuardDetail = m.GuardError
		return
	case m.id == nil:
		m.GuardDetail = "the master's process is unknown to this client (see identity): no verdict"
		return
	}
	rec, id := m.Guard, *m.id
	switch {
	case rec != nil && rec.Registered:
		m.GuardVerdict = verdictRegistered
		m.GuardDetail = fmt.Sprintf("its record names its running process: clients count its grants (of a TTL above %s once they recorded it there)", ttlString(rec.TTLMs))
		return
	case rec != nil && rec.Fsync == fsyncAlways && id.PersistsEveryWrite():
		m.GuardVerdict = verdictKept
		m.GuardDetail = "restarted since its record was written, persisting every write before and since (AOF, appendfsync always): clients count its grants at once and register its new run"
		return
	case rec == nil && !used:
		m.GuardVerdict = verdictFresh
		m.GuardDetail = "no master that answered has a record: a fresh deployment (no client of this library locked with this prefix yet), which clients count at once and register; or every master lost its data at once, which no client can tell"
		return
	}
	why := "it has no record while other masters have one: it restarted and lost its data"
	if rec != nil {
		why = fmt.Sprintf("its record names run %s, not its running process: it restarted", rec.Run)
	}
	held := id.Started.Add(longest + clock.Drift(longest, driftFactor))
	if now.Before(held) {
		m.GuardVerdict, m.GuardHeldBackMs = verdictHeldBack, held.Sub(now).Milliseconds()
		m.GuardDetail = fmt.Sprintf("%s; clients hold its grants back until it has been up for the longest TTL recorded, %v, and the drift: %v more (a client with a longer TTL of its own waits longer)",
			why, longest, held.Sub(now).Round(time.Second))
		return
	}
	m.GuardVerdict = verdictUpLong
	m.GuardDetail = fmt.Sprintf("%s, and has been up for longer than the longest TTL recorded, %v: the next client registers it and counts its grants", why, longest)
}

// fsyncAlways is the persistence a restart-guard record gives a run that
// persists every write (redlock/guard.go).
const fsyncAlways = "always"

// enforcement says what the library enforces on master m through this
// command's client.
func enforcement(m *masterHealth) {
	if !m.Answers {
		m.RestartGuard, m.DurableConfirmations, m.DurableDetail = unknown, unknown, "does not answer"
		m.Enforces = "nothing: it does not answer"
		return
	}
	var guard string
	if m.id == nil {
		m.RestartGuard = guardCannot
		guard = "restart guard: CANNOT APPLY, the master's process cannot be read (see identity): the library refuses its grants (ErrInvalid) unless the guard is off"
	} else {
		m.RestartGuard = guardApplies
		guard = "restart guard: applies, the master's process read on every new connection"
		if m.id.PersistsEveryWrite() {
			guard += " (it persists every write: a restart loses no grant, and holds nothing back)"
		}
	}
	m.DurableConfirmations, m.DurableDetail = durableConfirmations(m)
	durable := fmt.Sprintf("durable confirmations (Config.Durability{Local}): %s, %s", m.DurableConfirmations, m.DurableDetail)
	m.Enforces = guard + "; " + durable
	if m.Replicas >= 0 {
		m.Enforces += fmt.Sprintf("; replica confirmations (Durability{Replicas: n}, WAIT): n up to its %d replica(s)", m.Replicas)
	}
}

// durableConfirmations says whether the library can confirm a grant on
// master m's disk (WAITAOF) through this command's client, and why, as
// redlock's canConfirm judges it from the master's identity, and by
// whether the server has WAITAOF.
func durableConfirmations(m *masterHealth) (string, string) {
	id := m.id
	switch {
	case id == nil && m.AppendOnly == "no", id != nil && !id.AppendOnly:
		return "no", "AOF is off (appendonly no): WAITAOF cannot confirm a write on disk"
	case id == nil && m.AppendFsync == "no", id != nil && id.AppendFsync == "no":
		return "no", "appendfsync no: the AOF is never fsynced, so a confirmation would confirm nothing"
	case m.WaitAOF == "no":
		return "no", fmt.Sprintf("%s %s has no WAITAOF (Redis 7.2 and later, or Valkey)", m.Server, m.Version)
	case id == nil:
		return unknown, "the master's process cannot be read: a confirmation is tried, and fails if the master cannot give it"
	case id.AppendFsync == "":
		return unknown, "appendfsync cannot be read (CONFIG GET refused): WAITAOF is tried, and confirms nothing under appendfsync no"
	case m.WaitAOF == unknown:
		return unknown, "whether the server has WAITAOF is unknown: a confirmation is tried, and fails without it"
	case id.AppendFsync == "always":
		return "yes", "WAITAOF on an AOF with appendfsync always (every grant is on disk before it is acknowledged anyway)"
	}
	return "yes", fmt.Sprintf("WAITAOF on an AOF with appendfsync %s (Valkey 8.0 and Redis 7.4 to 7.x may confirm before the fsync: redis/redis#13793)", id.AppendFsync)
}
