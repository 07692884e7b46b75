package linearize

import (
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// The model is the sequential specification of one key's lock, as its
// holders know it. Its state is the set of holds whose holders know they
// hold the key (a porcupine partition is one key). It accepts:
//
//   - begin: a hold begins, if it is compatible with every hold in the set;
//   - end: a hold in the set ends (released, or its validity ran out);
//   - noop: anything, leaving the set as it is: a refused or possibly
//     applied acquire (its caller does not know it holds, so it does not
//     act), or a release that ends no hold.
//
// Two holds are compatible when both are Shared, or both have the same
// non-empty Owner.

// hold is one acquisition whose holder knows it holds the key.
type hold struct {
	lock   int64
	client int
	mode   Mode
	owner  string
}

func (h hold) compatible(o hold) bool {
	return (h.mode == Shared && o.mode == Shared) || (h.owner != "" && h.owner == o.owner)
}

// state is the model's state: the holds, ordered by lock id. It is never
// modified in place.
type state []hold

type stepKind int

const (
	begin stepKind = iota + 1
	end
	noop
)

// input is a porcupine operation's input; its output is always nil.
type input struct {
	step   stepKind
	hold   hold
	expiry bool // end: the validity ran out, no release
	op     Op   // the recorded op, for descriptions
}

func step(s, in, _ any) (bool, any) {
	st, i := s.(state), in.(input)
	switch i.step {
	case begin:
		for _, h := range st {
			if !h.compatible(i.hold) {
				return false, st
			}
		}
		at, _ := slices.BinarySearchFunc(st, i.hold.lock, func(h hold, l int64) int { return cmpInt(h.lock, l) })
		return true, slices.Insert(slices.Clone(st), at, i.hold)
	case end:
		at, ok := slices.BinarySearchFunc(st, i.hold.lock, func(h hold, l int64) int { return cmpInt(h.lock, l) })
		if !ok {
			return false, st
		}
		return true, slices.Delete(slices.Clone(st), at, at+1)
	}
	return true, st
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func equal(a, b any) bool { return slices.Equal(a.(state), b.(state)) }

func hash(s any) uint64 {
	h := uint64(14695981039346656037)
	for _, x := range s.(state) {
		h = (h ^ uint64(x.lock)) * 1099511628211
	}
	return h
}

func describeOp(in, _ any) string {
	i := in.(input)
	o := i.op
	switch {
	case i.step == begin:
		return fmt.Sprintf("hold begins: lock %d %s, token %d, until %v", o.Lock, o.Mode.describe(o.Owner), o.Token, o.Until)
	case i.step == end && i.expiry:
		return fmt.Sprintf("hold of lock %d expires", i.hold.lock)
	case i.step == end:
		return fmt.Sprintf("hold of lock %d released (%v)", i.hold.lock, o.Outcome)
	case o.Kind == Acquire:
		return fmt.Sprintf("acquire %s %v: no hold", o.Mode.describe(o.Owner), o.Outcome)
	}
	return fmt.Sprintf("release of lock %d (%v): ends no hold", o.Lock, o.Outcome)
}

func describeState(s any) string {
	st := s.(state)
	if len(st) == 0 {
		return "free"
	}
	parts := make([]string, len(st))
	for i, h := range st {
		parts[i] = fmt.Sprintf("lock %d (client %d, %s)", h.lock, h.client, h.mode.describe(h.owner))
	}
	return "held by " + strings.Join(parts, ", ")
}

// model is the lock model of one key.
var model = porcupine.Model{
	Init:              func() any { return state(nil) },
	Step:              step,
	Equal:             equal,
	Hash:              hash,
	DescribeOperation: describeOp,
	DescribeState:     describeState,
}
