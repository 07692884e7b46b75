package bench

import "context"

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

// ElectionBench is one N's election clients (election.go), for
// BenchmarkElection.
type ElectionBench = electionN

// NewElectionBench makes the clients of the election name on addrs, with
// o's defaults filled in, and has the first candidate lead.
func NewElectionBench(ctx context.Context, addrs []string, name string, o ElectionOptions) (*ElectionBench, error) {
	return newElectionN(ctx, o.withDefaults(), addrs, name)
}

// Once makes one leader change and one proclaim, and records them.
func (e *electionN) Once(ctx context.Context) error { return e.once(ctx) }

// Result returns what was recorded.
func (e *electionN) Result() ElectionRow { return e.result() }

// Close resigns and closes the clients.
func (e *electionN) Close() { e.close() }
