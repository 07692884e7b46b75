package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// point is one measurement in a plot: latency in µs at N nodes.
type point struct {
	n  int
	us float64
}

// series is one line of a panel.
type series struct {
	name   string
	color  string
	dashed bool
	pts    []point
}

var palette = map[string]string{
	Ours:              "#d62728",
	OursPooled:        "#8c564b",
	OursPolling:       "#bcbd22",
	OursApart:         "#17becf",
	OursApartPolling:  "#7f7f7f",
	Redsync:           "#1f77b4",
	RedsyncFailFast:   "#17becf",
	RedsyncNoDeadline: "#9467bd",
	Redislock:         "#2ca02c",
	Raw:               "#7f7f7f",
	Pipelined:         "#ff7f0e",
}

// WriteSVG plots lock+unlock latency against N as an SVG image: p50
// (solid) and p99 (dashed) for each implementation, healthy on the left
// and with one node frozen on the right (runs that hung left out), each on
// a logarithmic axis of its own.
func (r *Report) WriteSVG(w io.Writer) error {
	var healthy, frozen []series
	for _, im := range r.Impls {
		var p50, p99, f50, f99 []point
		for _, row := range r.Latency {
			if row.Impl == im.Name && row.Count > 0 {
				p50 = append(p50, point{row.Nodes, row.P50})
				p99 = append(p99, point{row.Nodes, row.P99})
			}
		}
		for _, row := range r.Degraded {
			if row.Impl == im.Name && row.Fault == Frozen && row.P50 > 0 && !row.Hung {
				f50 = append(f50, point{row.Nodes, row.P50})
				f99 = append(f99, point{row.Nodes, row.P99})
			}
		}
		c := palette[im.Name]
		healthy = append(healthy, series{im.Name + " p50", c, false, p50}, series{im.Name + " p99", c, true, p99})
		frozen = append(frozen, series{im.Name + " p50", c, false, f50}, series{im.Name + " p99", c, true, f99})
	}

	const pw, ph, gap = 460, 360, 40
	b := &strings.Builder{}
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", 2*pw+gap, ph+150)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(b, `<text x="10" y="20" font-size="14">lock+unlock latency vs N (%s, %d CPUs); solid p50, dashed p99; hung runs left out</text>`+"\n",
		r.Env.GoVersion, r.Env.NumCPU)
	lo, hi := bounds(healthy)
	panel(b, 0, 30, pw, ph, "healthy, 1 goroutine", r.Options.Nodes, healthy, lo, hi)
	lo, hi = bounds(frozen)
	panel(b, pw+gap, 30, pw, ph, "one node frozen (SIGSTOP), 1 goroutine", r.Options.Nodes, frozen, lo, hi)
	// Legend, one entry per implementation.
	for i, im := range r.Impls {
		x, y := 20+(i%3)*300, ph+70+(i/3)*20
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`+"\n",
			x, y, x+24, y, palette[im.Name], x+30, y+4, im.Name)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// bounds returns the decades that hold every point.
func bounds(ss []series) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, p := range s.pts {
			lo, hi = min(lo, p.us), max(hi, p.us)
		}
	}
	if math.IsInf(lo, 1) {
		return 1, 1000
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

// panel draws one chart with its axes at (x0, y0), w by h, with N on a
// linear axis and µs on a logarithmic one from lo to hi.
func panel(b *strings.Builder, x0, y0, w, h int, title string, ns []int, ss []series, lo, hi float64) {
	const left, right, top, bottom = 60, 15, 25, 40
	pw, ph := float64(w-left-right), float64(h-top-bottom)
	nmin, nmax := slices.Min(ns), slices.Max(ns)
	px := func(n int) float64 {
		if nmax == nmin {
			return float64(x0+left) + pw/2
		}
		return float64(x0+left) + pw*float64(n-nmin)/float64(nmax-nmin)
	}
	py := func(v float64) float64 {
		return float64(y0+top) + ph*(1-(math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo)))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="13">%s</text>`+"\n", x0+left, y0+15, title)
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", x0+left, y0+top, pw, ph)
	for d := lo; d <= hi*1.0001; d *= 10 {
		y := py(d)
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", x0+left, y, float64(x0+left)+pw, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", x0+left-5, y+4, usLabel(d))
	}
	for _, n := range ns {
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%d</text>`+"\n", px(n), float64(y0+top)+ph+16, n)
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">N (nodes)</text>`+"\n", float64(x0+left)+pw/2, float64(y0+top)+ph+34)
	for _, s := range ss {
		if len(s.pts) == 0 {
			continue
		}
		var pts []string
		for _, p := range s.pts {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.n), py(p.us)))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s><title>%s</title></polyline>`+"\n",
			strings.Join(pts, " "), s.color, dash, s.name)
		for _, p := range s.pts {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s N=%d: %s µs</title></circle>`+"\n",
				px(p.n), py(p.us), s.color, s.name, p.n, us(p.us))
		}
	}
}

// usLabel formats a decade of microseconds.
func usLabel(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%gs", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gms", v/1e3)
	}
	return fmt.Sprintf("%gµs", v)
}
