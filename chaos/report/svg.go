package report

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/fault"
	"github.com/quorumlock/quorumlock/chaos/scenario"
)

// Layout of the timeline, in pixels.
const (
	width     = 1200
	left      = 120 // lane labels
	right     = 20
	top       = 84
	laneH     = 22
	laneGap   = 6
	plotWidth = width - left - right
)

// Colours of the fault kinds, and of the overlaps.
var faultColor = map[string]string{
	"down":                      "#7f1d1d",
	string(fault.Restart):       "#b91c1c",
	"paused":                    "#ea580c",
	string(fault.Cut):           "#7e22ce",
	string(fault.Slow):          "#ca8a04",
	string(fault.ClockJump):     "#dc2626",
	string(fault.ClientPause):   "#ea580c",
	string(fault.DelayRequests): "#0f766e",
	string(fault.DelayReplies):  "#0f766e",
	string(fault.ScriptFlush):   "#0369a1",
	string(fault.RestartKept):   "#be185d",
}

const overlapColor = "#ef4444"

// keyColors tell the keys of a scenario apart.
var keyColors = []string{"#2563eb", "#059669", "#0891b2", "#4f46e5", "#65a30d", "#0d9488"}

// span is a stretch of time on a lane.
type span struct {
	from, to time.Duration
	kind     string
	title    string
}

// faultSpans turns the fault log into spans per master lane and per client
// lane, and instants (clock jumps) per master lane. A fault still open at
// the end of the run lasts until end.
func faultSpans(log []fault.Applied, nodes, clients int, end time.Duration) (nodeSpans, clientSpans [][]span) {
	nodeSpans, clientSpans = make([][]span, nodes), make([][]span, clients)
	type key struct {
		node int
		kind string
	}
	open := map[key]fault.Applied{}
	// closeSpan ends the span open on k at at. A link fault is keyed by
	// its clients, and drawn with the kind that opened it (cut or slow).
	closeSpan := func(k key, at time.Duration) {
		a, ok := open[k]
		if !ok {
			return
		}
		delete(open, k)
		kind := k.kind
		if strings.HasPrefix(kind, "link") {
			kind = string(a.Kind)
		}
		nodeSpans[k.node] = append(nodeSpans[k.node], span{a.Start, at, kind, a.Fault.String()})
	}
	linkKey := func(a fault.Applied) key { return key{a.Node, fmt.Sprint("link", a.Clients)} }
	for _, a := range log {
		if a.Err != "" {
			continue
		}
		switch a.Kind {
		case fault.Kill:
			open[key{a.Node, "down"}] = a
		case fault.Start:
			closeSpan(key{a.Node, "down"}, a.End)
		case fault.Pause:
			open[key{a.Node, "paused"}] = a
		case fault.Resume:
			closeSpan(key{a.Node, "paused"}, a.End)
		case fault.Cut, fault.Slow, fault.DelayRequests, fault.DelayReplies:
			closeSpan(linkKey(a), a.Start)
			open[linkKey(a)] = a
		case fault.Heal:
			for k := range open {
				if k.node == a.Node && strings.HasPrefix(k.kind, "link") && (a.Clients == nil || k == linkKey(a)) {
					closeSpan(k, a.Start)
				}
			}
		case fault.Restart, fault.RestartKept:
			nodeSpans[a.Node] = append(nodeSpans[a.Node], span{a.Start, a.End, string(a.Kind), a.Fault.String()})
		case fault.ClockJump, fault.ScriptFlush:
			nodeSpans[a.Node] = append(nodeSpans[a.Node], span{a.Start, a.Start, string(a.Kind), joinNote(a.Fault.String(), a.Note)})
		case fault.ClientPause:
			for _, c := range a.Clients {
				if c >= 0 && c < clients {
					clientSpans[c] = append(clientSpans[c], span{a.Start, a.End, string(fault.ClientPause), a.Fault.String()})
				}
			}
		}
	}
	for k := range open {
		closeSpan(k, end)
	}
	return nodeSpans, clientSpans
}

// joinNote is a fault's description, with its note after a colon if it
// has one.
func joinNote(desc, note string) string {
	if note == "" {
		return desc
	}
	return desc + ": " + note
}

// SVG writes the timeline of r.
func SVG(w io.Writer, r scenario.Result) error {
	bw := bufio.NewWriter(w)
	end := r.End
	for _, iv := range r.Intervals {
		end = max(end, iv.End)
	}
	end = max(end, time.Millisecond)
	x := func(t time.Duration) float64 { return left + float64(t)/float64(end)*plotWidth }
	lanes := len(r.Nodes) + r.Clients
	laneY := func(i int) int {
		y := top + i*(laneH+laneGap)
		if i >= len(r.Nodes) {
			y += 18 // room for the "clients" heading
		}
		return y
	}
	height := laneY(lanes) + 70

	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(bw, `<text x="10" y="20" font-size="15" font-weight="bold">%s [%s] on %s, seed %d</text>`+"\n",
		esc(r.Scenario), r.Verdict, esc(r.Backend), r.Seed)
	fmt.Fprintf(bw, `<text x="10" y="38">%s</text>`+"\n", esc(r.Outcome))
	fmt.Fprintf(bw, `<text x="10" y="54" fill="#555">%d acquisitions, %d faults, %d overlaps, %d stale writes rejected</text>`+"\n",
		r.Acquisitions, r.Faults, r.Overlaps, r.StaleRejected)

	// Time axis.
	axisY := laneY(lanes) + 4
	step := tickStep(end)
	for t := time.Duration(0); t <= end; t += step {
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#e5e7eb"/>`, x(t), top-4, x(t), axisY)
		fmt.Fprintf(bw, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%v</text>`+"\n", x(t), axisY+14, t)
	}

	// Lanes and their labels.
	for i := range lanes {
		label := ""
		if i < len(r.Nodes) {
			label = r.Nodes[i]
		} else {
			label = fmt.Sprintf("client %d", i-len(r.Nodes))
		}
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%d" height="%d" fill="#f9fafb"/>`, left, laneY(i), plotWidth, laneH)
		fmt.Fprintf(bw, `<text x="10" y="%d">%s</text>`+"\n", laneY(i)+15, esc(label))
	}
	fmt.Fprintf(bw, `<text x="10" y="%d" fill="#555" font-weight="bold">masters: faults</text>`, top-8)
	if r.Clients > 0 {
		fmt.Fprintf(bw, `<text x="10" y="%d" fill="#555" font-weight="bold">clients: locks held</text>`+"\n", laneY(len(r.Nodes))-6)
	}

	nodeSpans, clientSpans := faultSpans(r.FaultLog, len(r.Nodes), r.Clients, end)
	drawSpans := func(lane int, spans []span, inset int) {
		for _, s := range spans {
			if s.from == s.to { // an instant: a marker
				fmt.Fprintf(bw, `<g><title>%s at %v</title><rect x="%.1f" y="%d" width="3" height="%d" fill="%s"/></g>`+"\n",
					esc(s.title), s.from.Round(time.Millisecond), x(s.from)-1, laneY(lane), laneH, faultColor[s.kind])
				continue
			}
			fmt.Fprintf(bw, `<g><title>%s, %v to %v</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" opacity="0.8"/></g>`+"\n",
				esc(s.title), s.from.Round(time.Millisecond), s.to.Round(time.Millisecond),
				x(s.from), laneY(lane)+inset, max(x(s.to)-x(s.from), 1), laneH-2*inset, faultColor[s.kind])
		}
	}
	for i, spans := range nodeSpans {
		drawSpans(i, spans, 2)
	}

	// Locks held, coloured by key; the pauses of each client under them.
	var keys []string
	for _, iv := range r.Intervals {
		if !slices.Contains(keys, iv.Key) {
			keys = append(keys, iv.Key)
		}
	}
	slices.Sort(keys)
	for c, spans := range clientSpans {
		drawSpans(len(r.Nodes)+c, spans, 8)
	}
	for _, b := range lockBars(r, x) {
		color := keyColors[slices.Index(keys, b.first.Key)%len(keyColors)]
		title := b.first.String()
		if b.n > 1 {
			title = fmt.Sprintf("%d locks from %v to %v", b.n, b.first.Start.Round(time.Millisecond), b.end.Round(time.Millisecond))
		}
		fmt.Fprintf(bw, `<rect x="%.1f" y="%d" width="%.2f" height="%d" fill="%s" opacity="0.85"><title>%s</title></rect>`+"\n",
			x(b.first.Start), laneY(len(r.Nodes)+b.first.Client)+3, max(x(b.end)-x(b.first.Start), 0.5), laneH-6, color, esc(title))
	}

	// Overlaps: a band across every lane, and the two holders marked.
	for _, o := range r.Overlap {
		x0, w := x(o.From()), max(x(o.To())-x(o.From()), 2)
		fmt.Fprintf(bw, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" opacity="0.15"/>`, x0, top-4, w, laneY(lanes)-top, overlapColor)
		for _, c := range []int{o.A.Client, o.B.Client} {
			fmt.Fprintf(bw, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="none" stroke="%s" stroke-width="2"><title>overlap on %s: %s and %s</title></rect>`+"\n",
				x0, laneY(len(r.Nodes)+c)+1, w, laneH-2, overlapColor, esc(o.Key), esc(o.A.String()), esc(o.B.String()))
		}
	}

	// Legend.
	ly := axisY + 34
	lx := 10
	legend := []struct{ color, label string }{
		{faultColor["down"], "killed"}, {faultColor[string(fault.Restart)], "restarting"},
		{faultColor["paused"], "paused"}, {faultColor[string(fault.Cut)], "cut off"},
		{faultColor[string(fault.Slow)], "slowed"}, {faultColor[string(fault.ClockJump)], "clock jump"},
		{faultColor[string(fault.DelayRequests)], "bytes delayed"}, {faultColor[string(fault.ScriptFlush)], "script flush"},
		{faultColor[string(fault.RestartKept)], "restart, data kept"},
		{keyColors[0], "lock held"}, {overlapColor, "overlap"},
	}
	for _, l := range legend {
		fmt.Fprintf(bw, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`, lx, ly, l.color, lx+16, ly+11, l.label)
		lx += 30 + 7*len(l.label)
	}
	fmt.Fprintln(bw, "\n</svg>")
	return bw.Flush()
}

// bar is one drawn rectangle of a client lane: one lock, or several that
// lie within half a pixel of each other (a long run has far more locks than
// pixels).
type bar struct {
	first checker.Interval
	end   time.Duration
	n     int
}

// lockBars returns the bars of every client lane.
func lockBars(r scenario.Result, x func(time.Duration) float64) []bar {
	ivs := slices.Clone(r.Intervals)
	slices.SortFunc(ivs, func(a, b checker.Interval) int {
		return cmp.Or(cmp.Compare(a.Client, b.Client), cmp.Compare(a.Start, b.Start))
	})
	var bars []bar
	for _, iv := range ivs {
		if iv.Client < 0 || iv.Client >= r.Clients {
			continue
		}
		if n := len(bars); n > 0 && bars[n-1].first.Client == iv.Client && x(iv.Start)-x(bars[n-1].end) < 0.5 {
			bars[n-1].end = max(bars[n-1].end, iv.End)
			bars[n-1].n++
			continue
		}
		bars = append(bars, bar{first: iv, end: iv.End, n: 1})
	}
	return bars
}

// tickStep picks a round tick interval giving about 10 ticks over end.
func tickStep(end time.Duration) time.Duration {
	for _, s := range []time.Duration{
		10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute,
	} {
		if end/s <= 12 {
			return s
		}
	}
	return 30 * time.Minute
}

func esc(s string) string { return html.EscapeString(s) }

// WriteSVGs writes one timeline per result into dir (created if needed), as
// SCENARIO-BACKEND.svg, and returns the path of each by scenario name.
func WriteSVGs(dir string, results []scenario.Result) (map[string]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	paths := map[string]string{}
	for _, r := range results {
		if r.Verdict == scenario.Skip || r.Verdict == scenario.Error && len(r.Nodes) == 0 {
			continue
		}
		p := filepath.Join(dir, r.Scenario+"-"+r.Backend+".svg")
		f, err := os.Create(p)
		if err != nil {
			return paths, fmt.Errorf("report: %w", err)
		}
		err = SVG(f, r)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("report: %s: %w", p, err)
		}
		paths[r.Scenario] = p
	}
	return paths, nil
}
