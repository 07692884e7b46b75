// Package redisproc starts, stops, freezes and restarts real redis-server
// (or valkey-server) processes on free loopback ports. The tests, the chaos
// harness and the benchmarks all use it, so that every node they talk to is
// a real Redis or Valkey. The environment variable QUORUMLOCK_SERVER picks
// the server binary (default redis-server), so that every test that starts
// servers runs against either, e.g. QUORUMLOCK_SERVER=valkey-server.
package redisproc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Options configures one redis-server process. The zero value starts a server
// without persistence on a free port of 127.0.0.1.
type Options struct {
	// Binary is the server executable; "" means DefaultBinary(), looked up
	// on PATH.
	Binary string
	// Port to listen on; 0 picks a free one (kept across restarts).
	Port int
	// Dir holds the server's data files; "" makes a temporary directory that
	// Close removes.
	Dir string
	// AppendOnly turns on AOF persistence with appendfsync always, so that a
	// restarted server comes back with every acknowledged write.
	AppendOnly bool
	// Password, if set, is required from clients (requirepass).
	Password string
	// Args are extra "--name value" arguments.
	Args []string
	// StartTimeout bounds how long Start waits for the server to answer PING;
	// 0 means 10 seconds.
	StartTimeout time.Duration
}

// ServerEnv is the environment variable that names the server binary
// Start runs when Options.Binary is "": redis-server when it is unset,
// valkey-server for Valkey (the two take the same options).
const ServerEnv = "QUORUMLOCK_SERVER"

// DefaultBinary returns the server binary Start runs when Options.Binary is
// "": $QUORUMLOCK_SERVER, or "redis-server".
func DefaultBinary() string {
	if b := os.Getenv(ServerEnv); b != "" {
		return b
	}
	return "redis-server"
}

// Server is one redis-server process. Its methods are safe for concurrent use.
type Server struct {
	opts    Options
	port    int
	dir     string
	tempDir bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
}

// ErrNotRunning is returned by operations that need a running process.
var ErrNotRunning = errors.New("redisproc: server not running")

// Start starts a redis-server and waits until it answers PING.
func Start(opts Options) (*Server, error) {
	if opts.Binary == "" {
		opts.Binary = DefaultBinary()
	}
	bin, err := exec.LookPath(opts.Binary)
	if err != nil {
		return nil, fmt.Errorf("redisproc: %w (install it: scripts/ensure-redis.sh, or scripts/ensure-valkey.sh for valkey-server)", err)
	}
	opts.Binary = bin
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 10 * time.Second
	}
	s := &Server{opts: opts, dir: opts.Dir}
	if s.dir == "" {
		d, err := os.MkdirTemp("", "redisproc-")
		if err != nil {
			return nil, fmt.Errorf("redisproc: %w", err)
		}
		s.dir, s.tempDir = d, true
	}
	// A free port found by listening can be taken by someone else before the
	// server binds it; try a few.
	for try := 0; ; try++ {
		s.port = opts.Port
		if s.port == 0 {
			if s.port, err = FreePort(); err != nil {
				s.removeDir()
				return nil, err
			}
		}
		if err = s.Start(); err == nil {
			return s, nil
		}
		if opts.Port != 0 || try == 4 {
			s.removeDir()
			return nil, err
		}
	}
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisproc: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Addr is the server's "127.0.0.1:port" address; it stays the same across
// restarts.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port is the server's TCP port.
func (s *Server) Port() int { return s.port }

// Dir is the server's data directory.
func (s *Server) Dir() string { return s.dir }

// PID is the process id, or 0 when the server is not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Running reports whether the process is alive (paused counts as alive).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Paused reports whether the process is stopped with SIGSTOP.
func (s *Server) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

func (s *Server) args() []string {
	a := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--protected-mode", "no",
		"--daemonize", "no",
		"--logfile", "",
		"--loglevel", "warning",
	}
	if s.opts.AppendOnly {
		a = append(a, "--appendonly", "yes", "--appendfsync", "always")
	} else {
		a = append(a, "--appendonly", "no")
	}
	if s.opts.Password != "" {
		a = append(a, "--requirepass", s.opts.Password)
	}
	return append(a, s.opts.Args...)
}

// Start starts the process again after Kill or Stop, on the same port and
// data directory, and waits until it answers PING. A server without AOF
// comes back empty.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return nil
	}
	cmd := exec.Command(s.opts.Binary, s.args()...)
	cmd.Dir = s.dir
	out, err := os.Create(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		s.mu.Unlock()
		return fmt.Errorf("redisproc: %w", err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	// Own process group: a signal to the test's group does not reach it, and
	// it does not outlive a killed parent for long (Pdeathsig).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		s.mu.Unlock()
		return fmt.Errorf("redisproc: start %s: %w", s.opts.Binary, err)
	}
	exited := make(chan struct{})
	s.cmd, s.exited, s.paused = cmd, exited, false
	go func() {
		cmd.Wait()
		out.Close()
		s.mu.Lock()
		if s.cmd == cmd {
			s.cmd, s.paused = nil, false
		}
		s.mu.Unlock()
		close(exited)
	}()
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), s.opts.StartTimeout)
	defer cancel()
	if err := s.awaitPing(ctx, exited); err != nil {
		s.Kill()
		log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
		return fmt.Errorf("redisproc: %s did not come up: %w\n%s", s.Addr(), err, log)
	}
	return nil
}

// awaitPing polls until the server answers PING, the process exits or ctx ends.
func (s *Server) awaitPing(ctx context.Context, exited <-chan struct{}) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.ping(ctx); err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// ping sends a raw PING (and AUTH first, when a password is set).
func (s *Server) ping(ctx context.Context) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(200 * time.Millisecond))
	req := "PING\r\n"
	if s.opts.Password != "" {
		req = "AUTH " + s.opts.Password + "\r\n" + req
	}
	if _, err := c.Write([]byte(req)); err != nil {
		return err
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	if err != nil {
		return err
	}
	if n == 0 || buf[0] != '+' {
		return fmt.Errorf("unexpected reply %q", buf[:n])
	}
	return nil
}

func (s *Server) signal(sig syscall.Signal) (chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil, ErrNotRunning
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		return nil, fmt.Errorf("redisproc: signal %v: %w", sig, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		s.paused = true
	case syscall.SIGCONT:
		s.paused = false
	}
	return s.exited, nil
}

// Kill ends the process with SIGKILL and waits until it is gone. Whatever
// was not persisted is lost. Killing a stopped server is a no-op.
func (s *Server) Kill() error {
	exited, err := s.signal(syscall.SIGKILL)
	if errors.Is(err, ErrNotRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	<-exited
	return nil
}

// Stop shuts the server down with SIGTERM (resuming it first if paused) and
// waits until it is gone.
func (s *Server) Stop() error {
	if s.Paused() {
		s.Resume()
	}
	exited, err := s.signal(syscall.SIGTERM)
	if errors.Is(err, ErrNotRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	select {
	case <-exited:
		return nil
	case <-time.After(10 * time.Second):
		return s.Kill()
	}
}

// Pause freezes the process with SIGSTOP: it still accepts TCP connections
// (the kernel completes the handshake) but answers nothing.
func (s *Server) Pause() error {
	if _, err := s.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	s.awaitStopped()
	return nil
}

// awaitStopped waits, for up to a second, until the process is stopped:
// SIGSTOP is delivered asynchronously, and a command sent right after
// Pause returned must not be answered. Where /proc is missing it returns
// at once.
func (s *Server) awaitStopped() {
	stat := filepath.Join("/proc", strconv.Itoa(s.PID()), "stat")
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return
		}
	}
}

// Resume undoes Pause with SIGCONT.
func (s *Server) Resume() error {
	_, err := s.signal(syscall.SIGCONT)
	return err
}

// Restart kills the process and starts it again after delay (0 for at once)
// on the same port and directory. Without AOF the server comes back empty.
func (s *Server) Restart(delay time.Duration) error {
	if err := s.Kill(); err != nil {
		return err
	}
	if delay > 0 {
		time.Sleep(delay)
	}
	return s.Start()
}

// SetAppendOnly changes the server's persistence for its next Start (AOF
// with appendfsync always, or none), as an operator who changes the
// configuration before a restart does.
func (s *Server) SetAppendOnly(on bool) {
	s.mu.Lock()
	s.opts.AppendOnly = on
	s.mu.Unlock()
}

// Close kills the process and removes a temporary data directory.
func (s *Server) Close() error {
	err := s.Kill()
	s.removeDir()
	return err
}

func (s *Server) removeDir() {
	if s.tempDir {
		os.RemoveAll(s.dir)
	}
}
