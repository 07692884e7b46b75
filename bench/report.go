package bench

import (
	"encoding/json"
	"io"
	"time"
)

// Report is the outcome of one Run. Durations are in microseconds unless a
// field's name says otherwise. Encoded as JSON it is the harness's --json
// output.
type Report struct {
	Started     time.Time  `json:"started"`
	WallSeconds float64    `json:"wall_seconds"`
	Env         Env        `json:"env"`
	Options     Options    `json:"options"`
	Impls       []ImplInfo `json:"impls"`

	Latency    []LatencyRow    `json:"latency"`
	Throughput []ThroughputRow `json:"throughput"`
	Contention []ContentionRow `json:"contention"`
	Degraded   []DegradedRow   `json:"degraded"`
	Targets    []Target        `json:"targets"`
}

// Env describes the machine of a run.
type Env struct {
	GoVersion  string `json:"go_version"`
	GOOS       string `json:"goos"`
	GOARCH     string `json:"goarch"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Redis      string `json:"redis"`
	// LoadStart and LoadEnd are /proc/loadavg at the start and the end of
	// the run: other work on the machine shows up there, and in the
	// numbers.
	LoadStart string `json:"load_start,omitempty"`
	LoadEnd   string `json:"load_end,omitempty"`
	// StealPercent is the share of the CPUs' time that the hypervisor
	// gave to other guests over the run (steal.go), in percent; absent
	// where /proc/stat is not.
	StealPercent *float64 `json:"steal_pct,omitempty"`
}

// ImplInfo names an implementation and says how it was configured.
type ImplInfo struct {
	Name   string `json:"name"`
	Config string `json:"config"`
}

// LatencyRow is scenario (a), uncontended lock+unlock from one goroutine,
// with scenario (e), the allocations per cycle measured over the same
// cycles.
type LatencyRow struct {
	Impl  string `json:"impl"`
	Nodes int    `json:"nodes"`
	Dist
	Errors         int64   `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	AllocsPerCycle float64 `json:"allocs_per_cycle"`
	BytesPerCycle  float64 `json:"bytes_per_cycle"`
	// Goroutines is the most goroutines the implementation ran beside the
	// caller's while it worked (sampled every millisecond).
	Goroutines int  `json:"goroutines"`
	Hung       bool `json:"hung"`
	// StealPercent is the CPU steal during the row's turns, in percent
	// (see Env.StealPercent).
	StealPercent *float64 `json:"steal_pct,omitempty"`
}

// ThroughputRow is scenario (b): lock+unlock cycles per second from
// Goroutines goroutines, each on its own key, or, with Keys > 0, sharing
// Keys keys.
type ThroughputRow struct {
	Impl       string  `json:"impl"`
	Nodes      int     `json:"nodes"`
	Goroutines int     `json:"goroutines"`
	Keys       int     `json:"keys,omitempty"`
	Cycles     int64   `json:"cycles"`
	PerSec     float64 `json:"cycles_per_sec"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
	// AllocsPerCycle is the process's allocations over the turns divided
	// by the cycles; ExtraGoroutines the most goroutines the
	// implementation ran beside the Goroutines callers.
	AllocsPerCycle  float64 `json:"allocs_per_cycle"`
	ExtraGoroutines int     `json:"extra_goroutines"`
	Hung            bool    `json:"hung"`
}

// ContentionRow is scenario (c): Clients clients on one key, each holding
// it for HoldMicros once acquired.
type ContentionRow struct {
	Impl         string  `json:"impl"`
	Nodes        int     `json:"nodes"`
	Clients      int     `json:"clients"`
	HoldMicros   float64 `json:"hold_us"`
	Acquisitions int64   `json:"acquisitions"`
	PerSec       float64 `json:"acquisitions_per_sec"`
	// Wait is the time from calling Lock to holding the lock, over the
	// acquisitions.
	Wait Dist `json:"wait"`
	// Shares is each client's fraction of the acquisitions.
	Shares []float64 `json:"shares"`
	// MinShareOfMean is the smallest client's acquisitions over the mean.
	MinShareOfMean float64 `json:"min_share_of_mean"`
	// Spurious counts Lock calls that failed while the caller's context
	// still allowed waiting.
	Spurious      int64  `json:"spurious_failures"`
	SpuriousError string `json:"spurious_error,omitempty"`
	Hung          bool   `json:"hung"`
}

// DegradedRow is scenario (d): lock+unlock from one goroutine while one of
// the nodes is frozen (SIGSTOP) or killed.
type DegradedRow struct {
	Impl  string `json:"impl"`
	Nodes int    `json:"nodes"`
	Fault string `json:"fault"`
	Dist
	// Healthy is the same client's lock+unlock latency in the moment
	// before the fault, for half as long: the baseline of the ratio.
	Healthy    Dist   `json:"healthy"`
	Errors     int64  `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	Hung       bool   `json:"hung"`
	// Goroutines is how many more goroutines the process had at the end
	// of the run than before the implementation's client was made.
	Goroutines int `json:"goroutines"`
	// Conns and FaultyConns count the client's open connections at the end
	// of the run, to all nodes and to the faulty one.
	Conns       int `json:"conns"`
	FaultyConns int `json:"faulty_conns"`
	// Visible says whether the caller learnt of the faulty node through
	// the library's API (see FaultReporter).
	Visible bool `json:"visible"`
}

// Target is one of the targets and where this run stands.
type Target struct {
	Name  string `json:"name"`
	Goal  string `json:"goal"`
	Value string `json:"value"`
	Met   bool   `json:"met"`
	// Known is false when the run lacks what the target needs.
	Known bool `json:"known"`
}

// WriteJSON writes r as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func (r *Report) latency(impl string, n int) *LatencyRow {
	for i := range r.Latency {
		if row := &r.Latency[i]; row.Impl == impl && row.Nodes == n {
			return row
		}
	}
	return nil
}

// throughput finds the row of impl with n nodes and g goroutines, on a
// key each (keys 0) or sharing keys keys.
func (r *Report) throughput(impl string, n, g, keys int) *ThroughputRow {
	for i := range r.Throughput {
		if row := &r.Throughput[i]; row.Impl == impl && row.Nodes == n && row.Goroutines == g && row.Keys == keys {
			return row
		}
	}
	return nil
}

func (r *Report) contention(impl string, n int) *ContentionRow {
	for i := range r.Contention {
		if row := &r.Contention[i]; row.Impl == impl && row.Nodes == n {
			return row
		}
	}
	return nil
}

func (r *Report) degraded(impl string, n int, fault string) *DegradedRow {
	for i := range r.Degraded {
		if row := &r.Degraded[i]; row.Impl == impl && row.Nodes == n && row.Fault == fault {
			return row
		}
	}
	return nil
}
