package linearize

import (
	"cmp"
	"math"
	"slices"

	"github.com/anishathalye/porcupine"
)

// segments cuts one key's operations into histories that porcupine checks
// apart, so that a long history costs about as much as its parts. It cuts
// before an operation only where
//
//   - every operation before it returned before it was called, so every
//     order puts all of them first, and
//   - every hold that began before it also ended before it, so every order
//     the model accepts leaves the key free there, as it is at the start.
//
// The key's history is then linearizable exactly when each segment is.
// (An end is always called after its hold's begin returned, so a counter
// of the holds open in Call order finds the second condition.)
func segments(ops []porcupine.Operation) [][]porcupine.Operation {
	ops = slices.Clone(ops)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var segs [][]porcupine.Operation
	from, open, lastReturn := 0, 0, int64(math.MinInt64)
	for i, op := range ops {
		if i > from && open == 0 && lastReturn < op.Call {
			segs = append(segs, ops[from:i])
			from = i
		}
		lastReturn = max(lastReturn, op.Return)
		switch op.Input.(input).step {
		case begin:
			open++
		case end:
			open--
		}
	}
	if from < len(ops) {
		segs = append(segs, ops[from:])
	}
	return segs
}
