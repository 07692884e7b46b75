package otel_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/quorumlock/quorumlock/adapters/otel"
	"github.com/quorumlock/quorumlock/redlock"
)

// attrEncoder writes attributes as "key=value" joined by commas, in key
// order.
var attrEncoder = attribute.DefaultEncoder()

// recorder holds what an Observer recorded: metrics in an in-memory
// reader, ended spans in a span recorder.
type recorder struct {
	reader *sdkmetric.ManualReader
	spans  *tracetest.SpanRecorder
}

// newObserver makes an Observer that records into a fresh recorder.
func newObserver(t *testing.T, opts ...otel.Option) (redlock.Observer, *recorder) {
	t.Helper()
	r := &recorder{reader: sdkmetric.NewManualReader(), spans: tracetest.NewSpanRecorder()}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(r.spans))
	t.Cleanup(func() {
		if err := mp.Shutdown(context.Background()); err != nil {
			t.Errorf("meter provider shutdown: %v", err)
		}
		if err := tp.Shutdown(context.Background()); err != nil {
			t.Errorf("tracer provider shutdown: %v", err)
		}
	})
	opts = append([]otel.Option{otel.WithMeterProvider(mp), otel.WithTracerProvider(tp)}, opts...)
	return otel.NewObserver(opts...), r
}

// point is one data point: a counter's value (Count 0), or a histogram's
// count and sum.
type point struct {
	Count uint64
	Sum   float64
}

// points collects every data point but the attempts histogram's (which
// attemptPoints collects), keyed "name{attr=value,...}" with the attributes
// sorted.
func (r *recorder) points(t *testing.T) map[string]point {
	t.Helper()
	out := r.allPoints(t)
	for k := range out {
		if strings.HasPrefix(k, "quorumlock.acquire.attempts{") {
			delete(out, k)
		}
	}
	return out
}

// attemptPoints collects the attempts histogram's data points.
func (r *recorder) attemptPoints(t *testing.T) map[string]point {
	t.Helper()
	out := r.allPoints(t)
	for k := range out {
		if !strings.HasPrefix(k, "quorumlock.acquire.attempts{") {
			delete(out, k)
		}
	}
	return out
}

// allPoints collects every data point.
func (r *recorder) allPoints(t *testing.T) map[string]point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	out := make(map[string]point)
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != otel.ScopeName {
			t.Errorf("scope %q, want %q", sm.Scope.Name, otel.ScopeName)
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if !d.IsMonotonic {
					t.Errorf("%s: not monotonic", m.Name)
				}
				for _, dp := range d.DataPoints {
					out[m.Name+"{"+dp.Attributes.Encoded(attrEncoder)+"}"] = point{Sum: float64(dp.Value)}
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					out[m.Name+"{"+dp.Attributes.Encoded(attrEncoder)+"}"] = point{Count: dp.Count, Sum: dp.Sum}
				}
			case metricdata.Histogram[int64]:
				for _, dp := range d.DataPoints {
					out[m.Name+"{"+dp.Attributes.Encoded(attrEncoder)+"}"] = point{Count: dp.Count, Sum: float64(dp.Sum)}
				}
			default:
				t.Errorf("%s: unexpected data %T", m.Name, m.Data)
			}
		}
	}
	return out
}

// keys lists a points map's keys in order, for failure messages.
func keys(ps map[string]point) []string {
	out := make([]string, 0, len(ps))
	for k := range ps {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// wantPoints fails t unless got holds exactly want.
func wantPoints(t *testing.T, got, want map[string]point) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("points:\n got  %v\n want %v", got, want)
	}
}
