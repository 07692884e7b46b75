package main

import (
	"testing"
	"time"
)

func TestParseNode(t *testing.T) {
	for _, tc := range []struct {
		in                   string
		addr, user, password string
		db                   int
		tls, bad             bool
	}{
		{in: "redis-a:6379", addr: "redis-a:6379"},
		{in: "[::1]:7000", addr: "[::1]:7000"},
		{in: "redis://redis-a", addr: "redis-a:6379"},
		{in: "redis://:pw@redis-a:7000/3", addr: "redis-a:7000", password: "pw", db: 3},
		{in: "rediss://u:p%40ss@redis-a:7000", addr: "redis-a:7000", user: "u", password: "p@ss", tls: true},
		{in: "redis://u@redis-a:7000", bad: true},
		{in: "redis-a", bad: true},
		{in: "redis-a:0", bad: true},
		{in: ":6379", bad: true},
		{in: "redis://a:1/-1", bad: true},
		{in: "redis://a:1?x=y", bad: true},
		{in: "unix:///tmp/r.sock", bad: true},
	} {
		cfg, err := parseNode(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("%q: accepted as %+v", tc.in, cfg)
			}
			continue
		}
		if err != nil || cfg.Addr != tc.addr || cfg.Username != tc.user || cfg.Password != tc.password || cfg.DB != tc.db || (cfg.TLS != nil) != tc.tls {
			t.Errorf("%q: %+v, %v", tc.in, cfg, err)
		}
	}
}

func TestParseArgsIntersperses(t *testing.T) {
	fs, c := newFlags("x", time.Second)
	var n bool
	fs.BoolVar(&n, "n", false, "")
	pos, tail, err := parseArgs(fs, []string{"KEY", "-n", "--json", "--", "cmd", "-n"}, 1)
	if err != nil || !n || !c.json || len(pos) != 1 || pos[0] != "KEY" || len(tail) != 2 || tail[0] != "cmd" || tail[1] != "-n" {
		t.Fatalf("pos %q tail %q err %v n %v json %v", pos, tail, err, n, c.json)
	}
	pos, tail, err = parseArgs(fs, []string{"KEY", "cmd", "-x"}, 1)
	if err != nil || len(pos) != 1 || len(tail) != 2 || tail[1] != "-x" {
		t.Fatalf("without --: pos %q tail %q err %v", pos, tail, err)
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"10": 10 * time.Second, "0.5": 500 * time.Millisecond, "250ms": 250 * time.Millisecond, "1m": time.Minute} {
		if got, err := parseDuration(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"-1", "-1s", "soon", ""} {
		if _, err := parseDuration(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
