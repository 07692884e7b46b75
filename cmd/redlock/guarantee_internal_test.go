package main

import "testing"

// TestGuarantee covers the rules that the tests on real masters do not
// reach (a master with replicas, unreadable settings).
func TestGuarantee(t *testing.T) {
	safe := masterHealth{Answers: true, Server: "redis", Version: "7.2.4", Role: "master", Replicas: 0,
		AppendOnly: "yes", AppendFsync: "always", MaxmemoryPolicy: "noeviction", WaitAOF: "yes"}
	for _, tc := range []struct {
		name string
		edit func(*masterHealth)
		want string
	}{
		{"always", func(*masterHealth) {}, guaranteeConfig},
		{"everysec with WAITAOF", func(m *masterHealth) { m.AppendFsync = "everysec" }, guaranteeWaitAOF},
		{"everysec without WAITAOF", func(m *masterHealth) { m.AppendFsync, m.WaitAOF = "everysec", "no" }, guaranteeGuard},
		{"everysec, WAITAOF unknown", func(m *masterHealth) { m.AppendFsync, m.WaitAOF = "everysec", unknown }, unknown},
		{"fsync no with WAITAOF", func(m *masterHealth) { m.AppendFsync = "no" }, guaranteeGuard},
		{"fsync unknown with WAITAOF", func(m *masterHealth) { m.AppendFsync = unknown }, unknown},
		{"AOF off", func(m *masterHealth) { m.AppendOnly, m.WaitAOF = "no", unknown }, guaranteeGuard},
		{"AOF unknown", func(m *masterHealth) { m.AppendOnly = unknown }, unknown},
		{"replicas", func(m *masterHealth) { m.Replicas = 2 }, guaranteeNone},
		{"replica", func(m *masterHealth) { m.Role = "slave" }, guaranteeNone},
		{"allkeys eviction", func(m *masterHealth) { m.MaxmemoryPolicy = "allkeys-lru" }, guaranteeNone},
		{"volatile eviction", func(m *masterHealth) { m.MaxmemoryPolicy = "volatile-ttl" }, guaranteeNone},
		{"policy unknown", func(m *masterHealth) { m.MaxmemoryPolicy = unknown }, unknown},
		{"replicas unknown", func(m *masterHealth) { m.Replicas = -1 }, unknown},
		{"down", func(m *masterHealth) { m.Answers = false }, unknown},
	} {
		m := safe
		tc.edit(&m)
		if got, why := guarantee(m); got != tc.want || why == "" {
			t.Errorf("%s: %q (%s), want %q", tc.name, got, why, tc.want)
		}
	}
}

func TestServerAndWaitAOFByVersion(t *testing.T) {
	for _, tc := range []struct {
		info            map[string]string
		server, version string
	}{
		{map[string]string{"redis_version": "7.0.15"}, "redis", "7.0.15"},
		{map[string]string{"redis_version": "7.2.4", "server_name": "valkey", "valkey_version": "8.0.1"}, "valkey", "8.0.1"},
		{map[string]string{}, unknown, unknown},
	} {
		if s, v := serverOf(tc.info); s != tc.server || v != tc.version {
			t.Errorf("%v: %s %s, want %s %s", tc.info, s, v, tc.server, tc.version)
		}
	}
	for v, want := range map[string][3]int{"7.2.4": {7, 2, 1}, "10.0": {10, 0, 1}, "x.1": {0, 0, 0}, "7": {0, 0, 0}} {
		major, minor, ok := majorMinor(v)
		if ok != (want[2] == 1) || ok && (major != want[0] || minor != want[1]) {
			t.Errorf("%s: %d %d %v", v, major, minor, ok)
		}
	}
}
