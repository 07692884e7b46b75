package rueidis_test

import (
	"fmt"
	"net"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/redlocktest"
)

// masters are the addresses of three redis-servers for the Examples,
// started by TestMain; down is one where nothing listens.
var (
	masters []string
	down    string
)

func TestMain(m *testing.M) {
	if l, err := net.Listen("tcp", "127.0.0.1:0"); err == nil {
		down = l.Addr().String()
		l.Close()
	}
	var started []*redlocktest.Master
	for range 3 {
		s, err := redlocktest.StartMaster()
		if err != nil {
			// The tests skip; the Examples fail, saying why.
			fmt.Fprintln(os.Stderr, "rueidis: examples need redis-server:", err)
			break
		}
		started = append(started, s)
		masters = append(masters, s.Addr())
	}
	code := m.Run()
	for _, s := range started {
		s.Close()
	}
	if code == 0 {
		// rueidis.NewClient tries a cluster client first, whose slot
		// refresh may still sleep (at most a second) after the client
		// that replaced it was closed.
		if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/redis/rueidis.(*call).DelayDo.func1")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
