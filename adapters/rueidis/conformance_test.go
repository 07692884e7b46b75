package rueidis_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlocktest"
)

func TestConformance(t *testing.T) {
	redlocktest.TestNode(t, func(t *testing.T, addr string) redlock.Node { return newNode(t, addr) })
}
