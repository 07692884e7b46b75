package interleave_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/internal/interleave"
)

func TestAfterOwnWrite(t *testing.T) {
	interleave.AfterOwnWrite() // nothing set: nothing runs
	calls := 0
	interleave.SetAfterOwnWrite(func() { calls++ })
	interleave.AfterOwnWrite()
	interleave.SetAfterOwnWrite(nil)
	interleave.AfterOwnWrite()
	if calls != 1 {
		t.Errorf("the function set ran %d times, want 1", calls)
	}
}
