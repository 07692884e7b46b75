package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// newHist returns a histogram of durations in nanoseconds from 1µs to 10
// minutes with three significant digits.
func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(int64(time.Microsecond), int64(10*time.Minute), 3)
}

// record adds d to h, clamped to h's range (hdrhistogram rejects values
// above it).
func record(h *hdrhistogram.Histogram, d time.Duration) {
	if v := int64(d); v > h.HighestTrackableValue() {
		d = time.Duration(h.HighestTrackableValue())
	}
	h.RecordValue(int64(d))
}

// Dist summarises a distribution of durations, in microseconds.
type Dist struct {
	Count int64   `json:"count"`
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
}

func distOf(h *hdrhistogram.Histogram) Dist {
	us := func(v int64) float64 { return float64(v) / float64(time.Microsecond) }
	if h == nil || h.TotalCount() == 0 {
		return Dist{}
	}
	return Dist{
		Count: h.TotalCount(),
		P50:   us(h.ValueAtQuantile(50)),
		P90:   us(h.ValueAtQuantile(90)),
		P99:   us(h.ValueAtQuantile(99)),
		P999:  us(h.ValueAtQuantile(99.9)),
		Max:   us(h.Max()),
	}
}

// errCount counts errors and keeps the first one's message. It is safe
// for concurrent use.
type errCount struct {
	mu    sync.Mutex
	n     int64
	first string
}

func (e *errCount) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n == 0 {
		e.first = err.Error()
	}
	e.n++
}

// get returns the count and the first error's message.
func (e *errCount) get() (int64, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n, e.first
}

// run is the outcome of one drive.
type run struct {
	cycles  int64
	errs    *errCount
	hist    *hdrhistogram.Histogram // nil unless asked for
	elapsed time.Duration
	hung    bool
}

// drive runs body on g goroutines until d has passed, and waits for them.
// Each body gets a context that ends hangAfter/2 after d, its index and the
// end time, and must return soon after the end time. If they have not all
// returned hangAfter after d, drive reports the run as hung, calls unstick
// (if set: it lifts the fault the calls are stuck on), and waits hangAfter
// more before it gives up on them; returned says whether they all returned
// in the end, so that what they recorded may be read. A call that keeps
// retrying until its context ends, and then returns, is therefore an
// error, not a hang: only a call that outlives its context by hangAfter/2
// is one.
func drive(g int, d, hangAfter time.Duration, unstick func(), body func(ctx context.Context, i int, end time.Time)) (elapsed time.Duration, hung, returned bool) {
	start := time.Now()
	end := start.Add(d)
	ctx, cancel := context.WithDeadline(context.Background(), end.Add(hangAfter/2))
	defer cancel()
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() { body(ctx, i, end) })
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	timer := time.NewTimer(d + hangAfter)
	defer timer.Stop()
	select {
	case <-done:
		return time.Since(start), false, true
	case <-timer.C:
	}
	elapsed = time.Since(start)
	if unstick != nil {
		unstick()
	}
	timer.Reset(hangAfter)
	select {
	case <-done:
		return elapsed, true, true
	case <-timer.C:
		return elapsed, true, false
	}
}

// cycles runs lock+unlock cycles for d, ms[i] from goroutine i, and
// measures each cycle when hist is set.
func cycles(ms []Mutex, d, hangAfter time.Duration, unstick func(), hist bool) run {
	var n atomic.Int64
	errs := &errCount{}
	hists := make([]*hdrhistogram.Histogram, len(ms))
	if hist {
		for i := range hists {
			hists[i] = newHist()
		}
	}
	elapsed, hung, returned := drive(len(ms), d, hangAfter, unstick, func(ctx context.Context, i int, end time.Time) {
		m, h := ms[i], hists[i]
		// At least one cycle each, however late the goroutine starts.
		for first := true; first || time.Now().Before(end); first = false {
			t0 := time.Now()
			err := m.Lock(ctx)
			if err == nil {
				err = m.Unlock(ctx)
			}
			if h != nil {
				record(h, time.Since(t0))
			}
			n.Add(1)
			if err != nil {
				errs.add(err)
			}
		}
	})
	r := run{cycles: n.Load(), errs: errs, elapsed: elapsed, hung: hung}
	if hist && returned {
		r.hist = merge(hists)
	}
	return r
}

// merge merges hs into a new histogram.
func merge(hs []*hdrhistogram.Histogram) *hdrhistogram.Histogram {
	all := newHist()
	for _, h := range hs {
		if h != nil {
			all.Merge(h)
		}
	}
	return all
}

// contend runs len(ms) clients on one key for d: each waits for the lock
// (until the end of the run at most), holds it for hold, and unlocks. Until
// the first acquisition the clients wait up to hangAfter/2 longer, so that a
// slow start still measures something. It returns each client's
// acquisitions, the merged wait times of the acquisitions, and how many
// Lock calls failed while the client's context still allowed waiting.
func contend(ms []Mutex, d, hold, hangAfter time.Duration) (counts []int64, waits *hdrhistogram.Histogram, spurious *errCount, elapsed time.Duration, hung bool) {
	acquired := make([]atomic.Int64, len(ms))
	hists := make([]*hdrhistogram.Histogram, len(ms))
	for i := range hists {
		hists[i] = newHist()
	}
	spurious = &errCount{}
	var any atomic.Bool // some client acquired the lock
	var returned bool
	elapsed, hung, returned = drive(len(ms), d, hangAfter, nil, func(ctx context.Context, i int, end time.Time) {
		untilEnd, cancel := context.WithDeadline(ctx, end)
		defer cancel()
		for time.Now().Before(end) || !any.Load() {
			waitCtx := untilEnd
			if !any.Load() {
				waitCtx = ctx
			}
			t0 := time.Now()
			if err := ms[i].Lock(waitCtx); err != nil {
				if waitCtx.Err() == nil {
					spurious.add(err)
				} else if ctx.Err() != nil {
					return
				}
				continue
			}
			any.Store(true)
			record(hists[i], time.Since(t0))
			acquired[i].Add(1)
			time.Sleep(hold)
			ms[i].Unlock(ctx)
		}
	})
	counts = make([]int64, len(ms))
	for i := range acquired {
		counts[i] = acquired[i].Load()
	}
	if returned {
		waits = merge(hists)
	}
	return counts, waits, spurious, elapsed, hung
}
