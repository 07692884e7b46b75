package otel_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startRedis starts a redis-server without persistence on a free loopback
// port, stops it when t ends, and returns its address. It skips t when
// redis-server is not on PATH. (This module cannot use the root module's
// internal/redisproc.)
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not on PATH")
	}
	// A port found free can be taken before the server binds it; try a few.
	for try := 1; ; try++ {
		addr, stop, err := tryRedis(bin, t.TempDir())
		if err == nil {
			t.Cleanup(stop)
			return addr
		}
		if try == 5 {
			t.Fatalf("start redis-server: %v", err)
		}
	}
}

// tryRedis starts one redis-server and waits until it answers as itself.
func tryRedis(bin, dir string) (addr string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr = l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)

	var out bytes.Buffer
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--protected-mode", "no", "--daemonize", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	stop = func() {
		cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if pid, err := serverPID(addr); err == nil {
			if pid == cmd.Process.Pid {
				return addr, stop, nil
			}
			stop()
			return "", nil, fmt.Errorf("%s is another redis-server (pid %d)", addr, pid)
		}
		select {
		case <-exited:
			return "", nil, fmt.Errorf("redis-server exited: %s", out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, errors.New("redis-server did not answer within 10s")
		}
	}
}

// serverPID asks the server at addr for its process id (INFO server).
func serverPID(addr string) (int, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Second))
	if _, err := io.WriteString(c, "INFO server\r\n"); err != nil {
		return 0, err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if err != nil || !strings.HasPrefix(head, "$") {
		return 0, fmt.Errorf("INFO reply %q", head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(body), "\r\n") {
		if v, ok := strings.CutPrefix(line, "process_id:"); ok {
			return strconv.Atoi(v)
		}
	}
	return 0, errors.New("INFO reply has no process_id")
}
