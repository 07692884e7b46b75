package bench

import "testing"

func TestParseCPUStat(t *testing.T) {
	for _, tc := range []struct {
		line       string
		steal, tot uint64
		ok         bool
	}{
		{"cpu  45297 0 40613 74884 516 0 17980 7880 0 0", 7880, 45297 + 40613 + 74884 + 516 + 17980 + 7880, true},
		{"cpu 1 2 3 4 5 6 7 8", 8, 36, true},         // no guest fields (old kernels)
		{"cpu 1 2 3 4 5 6 7 8 100 100", 8, 36, true}, // guest time is in user already
		{"cpu0 1 2 3 4 5 6 7 8", 0, 0, false},        // one CPU, not the sum
		{"cpu 1 2 3 4 5 6 7", 0, 0, false},           // no steal field
		{"cpu 1 2 3 x 5 6 7 8", 0, 0, false},
		{"", 0, 0, false},
	} {
		got, ok := parseCPUStat(tc.line)
		if ok != tc.ok || got.steal != tc.steal || got.total != tc.tot {
			t.Errorf("parseCPUStat(%q) = %+v, %v; want steal %d, total %d, %v", tc.line, got, ok, tc.steal, tc.tot, tc.ok)
		}
	}
}

func TestStealMeterPercent(t *testing.T) {
	var m stealMeter
	if m.percent() != nil {
		t.Fatal("a meter that measured nothing reports a share")
	}
	m.sum, m.known = cpuTimes{steal: 25, total: 1000}, true
	if p := m.percent(); p == nil || *p != 2.5 {
		t.Fatalf("percent = %v, want 2.5", p)
	}
	if _, ok := readCPUTimes(); !ok {
		t.Skip("no /proc/stat here")
	}
	m.begin()
	m.end()
	if !m.known || m.sum.total < 1000 {
		t.Fatalf("after an interval: %+v", m)
	}
}
