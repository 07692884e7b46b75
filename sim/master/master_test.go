package master_test

import (
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/sim/master"
)

var t0 = time.Unix(1_000_000, 0)

func newMaster(p master.Persistence, lag time.Duration) *master.Master {
	return master.New("m", t0, p, master.NewClock(t0, 0, 1), lag)
}

func set(m *master.Master, at time.Time, key string) {
	m.Do(at, []string{"SET", key, "v"}, nil)
}

func has(m *master.Master, at time.Time, key string) bool {
	ok, _ := m.Holds(at, key, "v")
	return ok
}

// TestCrashLosesWhatWasNotDurable checks what a power loss leaves, per
// persistence: nothing without AOF, the writes up to the last fsync with
// everysec, everything with always.
func TestCrashLosesWhatWasNotDurable(t *testing.T) {
	for _, tt := range []struct {
		p           master.Persistence
		early, late bool // kept: a write before the fsync, one after
	}{
		{master.Persistence{Fsync: "everysec"}, false, false},
		{master.Persistence{AppendOnly: true, Fsync: "everysec"}, true, false},
		{master.Persistence{AppendOnly: true, Fsync: "always"}, true, true},
	} {
		m := newMaster(tt.p, -1)
		set(m, t0, "early")
		m.Fsync(t0.Add(time.Second))
		set(m, t0.Add(1500*time.Millisecond), "late")
		run := m.RunID()
		m.Crash(t0.Add(1600 * time.Millisecond))
		m.Restart(t0.Add(2 * time.Second))
		now := t0.Add(2 * time.Second)
		if has(m, now, "early") != tt.early || has(m, now, "late") != tt.late || m.RunID() == run {
			t.Errorf("%s: early %v late %v run %s -> %s; want %v %v and a new run id", tt.p, has(m, now, "early"), has(m, now, "late"), run, m.RunID(), tt.early, tt.late)
		}
	}
}

// TestFailoverPromotesWhatTheReplicaHad checks that a failover loses the
// writes the lagging replica had not received.
func TestFailoverPromotesWhatTheReplicaHad(t *testing.T) {
	m := newMaster(master.Persistence{}, 300*time.Millisecond)
	set(m, t0, "old")
	set(m, t0.Add(time.Second), "new")
	if !m.Failover(t0.Add(1100 * time.Millisecond)) {
		t.Fatal("no replica")
	}
	now := t0.Add(1100 * time.Millisecond)
	if !has(m, now, "old") || has(m, now, "new") {
		t.Errorf("after failover: old %v new %v, want the write 300ms before only", has(m, now, "old"), has(m, now, "new"))
	}
}

// TestReplicaSyncsWithTheRestartedMaster: a master that lost its data in a
// crash comes back, and its replica syncs from it again: a later failover
// promotes what the master kept and wrote since, never a write the crash
// lost beside the writes made after it.
func TestReplicaSyncsWithTheRestartedMaster(t *testing.T) {
	m := newMaster(master.Persistence{}, 10*time.Millisecond)
	set(m, t0, "lost")
	m.Replicate(t0.Add(time.Second)) // the replica has it
	m.Crash(t0.Add(time.Second))
	m.Restart(t0.Add(2 * time.Second))
	set(m, t0.Add(2*time.Second), "after")
	now := t0.Add(3 * time.Second)
	if !m.Failover(now) {
		t.Fatal("no replica")
	}
	if has(m, now, "lost") || !has(m, now, "after") {
		t.Errorf("after the restart and a failover: lost %v after %v; want only the write made after the restart", has(m, now, "lost"), has(m, now, "after"))
	}
}

// TestExpiryByTheMastersClock checks that keys expire by the master's own
// clock, which a step moves.
func TestExpiryByTheMastersClock(t *testing.T) {
	m := newMaster(master.Persistence{}, -1)
	m.Do(t0, []string{"SET", "k", "v", "PX", "1000"}, nil)
	if !has(m, t0.Add(900*time.Millisecond), "k") {
		t.Fatal("expired early")
	}
	m.Clock.Step(t0.Add(900*time.Millisecond), 200*time.Millisecond)
	if has(m, t0.Add(901*time.Millisecond), "k") {
		t.Fatal("a clock step forward did not expire the key")
	}
}

// TestScriptReplies checks Redis's conversions of a script's result.
func TestScriptReplies(t *testing.T) {
	m := newMaster(master.Persistence{}, -1)
	for _, tt := range []struct {
		src  string
		want string
	}{
		{"return 3.7", "3"},
		{"return 'x'", `[]byte{0x78}`},
		{"return false", "<nil>"},
		{"return {1, 2, nil, 4}", "[]interface {}{1, 2}"},
		{"return redis.call('GET', 'missing')", "<nil>"},
		{"return redis.pcall('INCR', KEYS[1])", `"WRONGTYPE Operation against a key holding the wrong kind of value"`},
	} {
		m.Do(t0, []string{"HSET", "h", "f", "v"}, nil)
		got := m.Eval(t0, tt.src, []string{"h"}, nil, nil)
		if s := show(got); s != tt.want {
			t.Errorf("%s: %s, want %s", tt.src, s, tt.want)
		}
	}
}
