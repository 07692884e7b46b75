package goredis_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startRedis starts a redis-server on a free loopback port with the extra
// arguments, and returns its address; it stops at the end of tb. It skips
// tb when redis-server is not on PATH.
func startRedis(tb testing.TB, args ...string) string {
	tb.Helper()
	addr, stop, err := launchRedis(tb.TempDir(), args...)
	if err == errNoRedis {
		tb.Skip(err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(stop)
	return addr
}

var errNoRedis = fmt.Errorf("redis-server not on PATH")

// launchRedis starts a redis-server without persistence in dir.
func launchRedis(dir string, args ...string) (addr string, stop func(), err error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", nil, errNoRedis
	}
	for try := 0; try < 5; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", nil, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		cmd := exec.Command(bin, append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--dir", dir}, args...)...)
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			return "", nil, err
		}
		exited := make(chan struct{})
		go func() { cmd.Wait(); close(exited) }()
		stop = func() { cmd.Process.Kill(); <-exited }
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if waitPing(addr, exited) {
			return addr, stop, nil
		}
		stop()
	}
	return "", nil, fmt.Errorf("redis-server did not start")
}

// waitPing waits up to 10s for addr to answer PING; false if the server exited.
func waitPing(addr string, exited <-chan struct{}) bool {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return false
		default:
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.SetDeadline(time.Now().Add(time.Second))
			c.Write([]byte("PING\r\n"))
			buf := make([]byte, 7)
			_, err := io.ReadFull(c, buf)
			c.Close()
			if err == nil && string(buf) == "+PONG\r\n" {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// replyDropper is a TCP proxy to a Redis server that forwards everything,
// except that once a command containing marker has gone to the server, it
// closes the client's connection when the server's reply arrives instead of
// forwarding it: the command ran, the client sees a broken connection.
type replyDropper struct {
	l      net.Listener
	target string
	marker []byte
	wg     sync.WaitGroup
}

func newReplyDropper(tb testing.TB, target, marker string) *replyDropper {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &replyDropper{l: l, target: target, marker: []byte(marker)}
	p.wg.Go(p.serve)
	tb.Cleanup(func() { l.Close(); p.wg.Wait() })
	return p
}

func (p *replyDropper) Addr() string { return p.l.Addr().String() }

func (p *replyDropper) serve() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		var seen atomic.Bool
		p.wg.Go(func() {
			buf := make([]byte, 64<<10)
			for {
				k, err := c.Read(buf)
				if k > 0 {
					if bytes.Contains(buf[:k], p.marker) {
						seen.Store(true)
					}
					s.Write(buf[:k])
				}
				if err != nil {
					s.Close()
					return
				}
			}
		})
		p.wg.Go(func() {
			buf := make([]byte, 64<<10)
			for {
				k, err := s.Read(buf)
				if err != nil || seen.Load() {
					c.Close()
					s.Close()
					return
				}
				c.Write(buf[:k])
			}
		})
	}
}

// clusterOne starts a one-node Redis Cluster holding every slot and returns
// its address once the cluster state is ok.
func clusterOne(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	addr := startRedis(tb, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, "nodes.conf"))
	if out, err := redisCLI(addr, "CLUSTER", "ADDSLOTSRANGE", "0", "16383"); err != nil {
		tb.Fatalf("CLUSTER ADDSLOTSRANGE: %v: %s", err, out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		out, _ := redisCLI(addr, "CLUSTER", "INFO")
		if bytes.Contains(out, []byte("cluster_state:ok")) {
			return addr
		}
		time.Sleep(20 * time.Millisecond)
	}
	tb.Fatal("cluster state never ok")
	return ""
}

// redisCLI sends one inline command and returns the raw reply.
func redisCLI(addr string, args ...string) ([]byte, error) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write(b.Bytes()); err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	k, err := c.Read(buf)
	if k > 0 && buf[0] == '-' {
		return buf[:k], fmt.Errorf("%s", bytes.TrimSpace(buf[1:k]))
	}
	return buf[:k], err
}

// blackHole returns the address of a listener that accepts connections and
// never answers, as a frozen master; they close at the end of tb.
func blackHole(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	tb.Cleanup(func() {
		l.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}
