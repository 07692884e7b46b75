package nodeutil_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/nodeutil"
)

func TestIdentity(t *testing.T) {
	var id nodeutil.Identity
	if _, _, _, _, ok := id.Get(); ok || id.RunID() != "" {
		t.Fatal("a zero Identity knows a master")
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
	runID, started, restarted, durable, ok := id.Get()
	if !ok || runID != "aaa" || restarted || !durable {
		t.Errorf("first reading: %q restarted %t durable %t ok %t", runID, restarted, durable, ok)
	}
	// Uptime counts whole seconds: the latest start is 29s before.
	if started.Before(before.Add(-29*time.Second)) || started.After(after.Add(-29*time.Second)) {
		t.Errorf("started %v before the reading, want 29s (uptime 30 whole seconds)", before.Sub(started))
	}
	id.Note(server("bbb", 0), "aof_enabled:1\r\n", "everysec")
	if runID, _, restarted, durable, _ := id.Get(); runID != "bbb" || !restarted || durable || id.RunID() != "bbb" {
		t.Errorf("after a restart: %q restarted %t durable %t", runID, restarted, durable)
	}
	id.Note(server("aaa", 1), "aof_enabled:0\r\n", "always")
	if _, _, restarted, durable, _ := id.Get(); restarted || durable {
		t.Errorf("the first run id again: restarted %t (want false), durable %t with AOF off", restarted, durable)
	}
}
