package pool

import (
	"fmt"
	"strings"
)

// The pipelined connection has performance layers on top of what its
// rules need, each of which must earn its place in the benchmarks
// (bench/README.md, "What each layer earns"). Each can be turned off for
// such a comparison, and only for it: the linker sets layersOff, a list
// of the names below separated by commas, in a benchmark's build:
//
//	go test -ldflags=-X=github.com/quorumlock/quorumlock/pool.layersOff=yield -bench ...
//
// An unknown name stops the program at its start, so that a misspelt
// layer does not pass for a measurement.
var layersOff string

// layers are the performance layers in use; all are, but for a benchmark.
var layers = parseLayers(layersOff)

type layerSet struct {
	// combine: a caller that finds nobody writing on its connection
	// writes what is queued itself while few bytes are in flight (flat
	// combining, pipe_write.go), instead of waking the writer goroutine.
	combine bool
	// yield: a caller about to write on a connection that others use
	// yields first (runtime.Gosched), so that the callers about to queue
	// write with it. Only callers write (combine).
	yield bool
	// recycle: requests are reused (request.go's sync.Pool).
	recycle bool
	// evalFirst: the first call of each script on a connection goes as
	// EVAL (scriptsent.go).
	evalFirst bool
}

func parseLayers(off string) layerSet {
	l := layerSet{combine: true, yield: true, recycle: true, evalFirst: true}
	names := map[string]*bool{"combine": &l.combine, "yield": &l.yield, "recycle": &l.recycle, "evalfirst": &l.evalFirst}
	for name := range strings.SplitSeq(off, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		on, ok := names[name]
		if !ok {
			panic(fmt.Sprintf("pool: layersOff names no layer %q", name))
		}
		*on = false
	}
	return l
}
