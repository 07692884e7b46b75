package bench

import (
	"os"
	"strconv"
	"strings"
)

// CPU steal is the time the hypervisor gave the machine's CPUs to other
// guests while this one wanted them (Linux's /proc/stat). Every
// implementation pays it alike in the long run, but the turns of one run
// are short, and a burst of steal during one implementation's turns moves
// that implementation's percentiles, and so the ratios, by as much as the
// differences being measured. The report records it per latency row and
// for the whole run, so that a reader can tell a quiet run from a noisy
// one.

// cpuTimes are the aggregate CPU times of /proc/stat, in clock ticks.
type cpuTimes struct {
	steal, total uint64
}

// readCPUTimes reads the machine's CPU times; ok is false where
// /proc/stat is missing or unreadable.
func readCPUTimes() (t cpuTimes, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return parseCPUStat(line)
}

// parseCPUStat parses /proc/stat's first line: "cpu" and the ticks spent
// in user, nice, system, idle, iowait, irq, softirq and steal, then
// (left out: user and nice count them already) guest and guest_nice.
func parseCPUStat(line string) (t cpuTimes, ok bool) {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}, false
	}
	for i, s := range f[1:9] {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}, false
		}
		t.total += v
		if i == 7 {
			t.steal = v
		}
	}
	return t, true
}

// stealMeter adds up the steal over the intervals it measured.
type stealMeter struct {
	start cpuTimes
	began bool // start was read
	sum   cpuTimes
	known bool // at least one interval was measured
}

// begin starts an interval.
func (m *stealMeter) begin() {
	m.start, m.began = readCPUTimes()
}

// end ends the interval begun last, if its start was read.
func (m *stealMeter) end() {
	t, ok := readCPUTimes()
	if !ok || !m.began || t.total < m.start.total || t.steal < m.start.steal {
		return
	}
	m.sum.steal += t.steal - m.start.steal
	m.sum.total += t.total - m.start.total
	m.began, m.known = false, true
}

// percent is the share of the CPUs' time stolen over the intervals
// measured, in percent, or nil when none was.
func (m *stealMeter) percent() *float64 {
	if !m.known {
		return nil
	}
	p := 0.0
	if m.sum.total > 0 {
		p = 100 * float64(m.sum.steal) / float64(m.sum.total)
	}
	return &p
}
