package valkeygo_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/internal/redisproc"
	"github.com/quorumlock/quorumlock/redlocktest"
)

// masters are the addresses of three servers for the Examples (the tests
// start their own); down is an address where nothing listens.
var masters, down = make([]string, 3), ""

// TestMain starts the Examples' masters, runs the tests, and fails them if
// a goroutine outlived them. valkey.NewClient tries a cluster client
// first, whose slot refresh may still sleep (at most a second) after the
// client that replaced it was closed: that one is let go.
func TestMain(m *testing.M) {
	stop := startMasters()
	code := m.Run()
	stop()
	if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/valkey-io/valkey-go.(*call).DelayDo.func1")); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}

// startMasters starts the masters and finds an address for down; without
// a server, the tests skip and the Examples fail, saying why.
func startMasters() (stop func()) {
	if port, err := redisproc.FreePort(); err == nil {
		down = fmt.Sprintf("127.0.0.1:%d", port)
	}
	stops := make([]func() error, 0, len(masters))
	for i := range masters {
		s, err := redlocktest.StartMaster()
		if err != nil {
			fmt.Fprintln(os.Stderr, "valkeygo: the examples need a server:", err)
			break
		}
		masters[i], stops = s.Addr(), append(stops, s.Close)
	}
	return func() {
		for _, stop := range stops {
			stop()
		}
	}
}
