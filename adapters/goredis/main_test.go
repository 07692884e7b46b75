package goredis_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// masters are three redis-servers for the Examples, started by TestMain.
var masters []string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "goredis-example-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var stops []func()
	for range 3 {
		addr, stop, err := launchRedis(dir)
		if err != nil {
			// The tests skip; the Examples fail, saying why.
			fmt.Fprintln(os.Stderr, "goredis: examples need redis-server:", err)
			break
		}
		masters = append(masters, addr)
		stops = append(stops, stop)
	}
	code := m.Run()
	for _, stop := range stops {
		stop()
	}
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
