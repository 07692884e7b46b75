package bench

// StealMeter is stealMeter for the Go benchmarks, which report the CPU
// steal of each run beside its numbers.
type StealMeter = stealMeter

// Begin starts an interval.
func (m *stealMeter) Begin() { m.begin() }

// End ends the interval begun last.
func (m *stealMeter) End() { m.end() }

// Percent is the steal over the intervals measured, in percent of the
// CPUs' time, or nil where /proc/stat cannot tell.
func (m *stealMeter) Percent() *float64 { return m.percent() }
