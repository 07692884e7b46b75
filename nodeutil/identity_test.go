package nodeutil_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
	"github.com/quorumlock/quorumlock/redlock"
)

func TestIdentity(t *testing.T) {
	var id nodeutil.Identity
	if _, err := id.Get(); !errors.Is(err, redlock.ErrNoIdentity) || id.RunID() != "" {
		t.Fatalf("a zero Identity knows a master: %v", err)
	}
	server := func(runID string, uptime int) string {
		return "# Server\r\nredis_version:7.0.15\r\nrun_id:" + runID + "\r\nuptime_in_seconds:" + strconv.Itoa(uptime) + "\r\n"
	}
	if id.Note("# Server\r\nredis_version:7.0.15\r\n", "", "") {
		t.Error("a reading without run id was noted")
	}
	before := time.Now()
	if !id.Note(server("aaa", 30), "# Persistence\r\naof_enabled:1\r\n", "always") {
		t.Fatal("a reading was not noted")
	}
	after := time.Now()
	got, err := id.Get()
	if err != nil || got.RunID != "aaa" || !got.PersistsEveryWrite() || got.Version != "7.0.15" {
		t.Errorf("first reading: %+v, %v", got, err)
	}
	// Uptime counts whole seconds: the latest start is 29s before.
	if got.Started.Before(before.Add(-29*time.Second)) || got.Started.After(after.Add(-29*time.Second)) {
		t.Errorf("started %v before the reading, want 29s (uptime 30 whole seconds)", before.Sub(got.Started))
	}
	id.Note(server("bbb", 0), "aof_enabled:1\r\n", "everysec")
	if got, _ := id.Get(); got.RunID != "bbb" || got.PersistsEveryWrite() || got.AppendFsync != "everysec" || id.RunID() != "bbb" {
		t.Errorf("after a restart: %+v", got)
	}
	id.Note(server("aaa", 1), "aof_enabled:0\r\n", "always")
	if got, _ := id.Get(); got.PersistsEveryWrite() || got.AppendOnly {
		t.Errorf("AOF off counts as persisting every write: %+v", got)
	}
	// A refusal after a reading changes nothing (one client's connections
	// share one user); before any reading it is the reason.
	id.Refused(errors.New("NOPERM"))
	if _, err := id.Get(); err != nil {
		t.Errorf("a refusal hid a known reading: %v", err)
	}
	var refused nodeutil.Identity
	refused.Refused(errors.New("NOPERM this user has no permissions to run the 'info' command"))
	if _, err := refused.Get(); !errors.Is(err, redlock.ErrNoIdentity) || !strings.Contains(err.Error(), "NOPERM") {
		t.Errorf("after a refusal: %v, want ErrNoIdentity naming the refusal", err)
	}
}
