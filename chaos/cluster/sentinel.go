package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/quorumlock/quorumlock/chaos/netfault"
	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// Replicated masters behind Sentinel, as most production Redis runs: each
// master has one replica, which copies it asynchronously, and a Sentinel
// watches one of them (Watched) and fails it over to its replica when it
// goes down. That replica reaches its master through a proxy
// (package netfault), so that the harness can make its replication stream
// lag (Lag) and lose what the stream still carried when the master dies
// (Crash): the replica then lacks the master's last writes when Sentinel
// promotes it. The other masters' replicas are attached directly, so that
// a client that waits for one replica (WAIT 1) is answered at once.
//
// Sentinel is the server binary started with --sentinel (redis-server or
// valkey-server), with a down-after-milliseconds of 1.5s and a
// failover-timeout of 10s: a failover takes 2.5-4s. A shorter
// down-after fails over back and forth: Sentinel connects to a newly
// promoted master at most a second after the switch (it reconnects an
// instance link once a second), and takes it for down meanwhile. The
// local backend only, without a password.

// ReplicatedConfig configures StartReplicated.
type ReplicatedConfig struct {
	Config
	// Watched is the master that Sentinel watches, whose replica's link
	// the harness can delay and break.
	Watched int
}

// Replicated is a local cluster whose masters each have a replica, one of
// them watched by Sentinel. Nodes are the masters as they were started:
// after a failover, node Watched still names the old master's address
// (MasterAddr names the current one).
type Replicated struct {
	*Local
	watched  int
	name     string
	replicas []*redisproc.Server
	link     *netfault.Net // between the watched master's replica and the master
	sentinel *sentinelProc
}

// SentinelMasterName is the name of the watched master set in Sentinel.
const SentinelMasterName = "chaos"

// Sentinel's timing: a master is down once it has not answered for
// sentinelDownAfter (more than the second Sentinel may take to connect to
// a new master). sentinelFailoverTimeout bounds a failover (and delays a
// second try by twice as much), and is also how long Sentinel leaves a
// replica that replicates from another address than the master's (the
// lagging link's proxy) before it points it at the master itself
// (+fix-slave-config), which would end the lag: longer than a scenario.
const (
	sentinelDownAfter       = 1500 * time.Millisecond
	sentinelFailoverTimeout = 10 * time.Second
)

// StartReplicated starts cfg.Nodes masters (StartLocal), a replica of each,
// and a Sentinel that watches master cfg.Watched, and returns once every
// replica is in sync and Sentinel knows the watched master's replica.
func StartReplicated(ctx context.Context, cfg ReplicatedConfig) (*Replicated, error) {
	if cfg.Password != "" {
		return nil, fmt.Errorf("%w: replicated masters with a password", ErrUnsupported)
	}
	l, err := StartLocal(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	r := &Replicated{Local: l, watched: cfg.Watched, name: SentinelMasterName}
	if err := r.start(ctx, cfg); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// start starts the replicas and Sentinel.
func (r *Replicated) start(ctx context.Context, cfg ReplicatedConfig) error {
	if r.watched < 0 || r.watched >= len(r.nodes) {
		return fmt.Errorf("cluster: watched master %d of %d", r.watched, len(r.nodes))
	}
	var err error
	if r.link, err = netfault.New([]string{r.nodes[r.watched].Addr()}, 1); err != nil {
		return err
	}
	for i, n := range r.nodes {
		// A replica's first sync starts at once, not after the default 5s
		// that a diskless sync waits for more replicas.
		if _, err := do(ctx, n.Addr(), "CONFIG", "SET", "repl-diskless-sync-delay", "0"); err != nil {
			return fmt.Errorf("cluster: %s: %w", n.Name(), err)
		}
		upstream := n.Addr()
		if i == r.watched {
			upstream = r.link.Addrs(0)[0]
		}
		host, port, _ := net.SplitHostPort(upstream)
		s, err := redisproc.Start(redisproc.Options{Binary: cfg.ServerBinary(),
			Args: []string{"--replicaof", host, port, "--repl-diskless-sync-delay", "0"}})
		if err != nil {
			return fmt.Errorf("cluster: replica of %s: %w", n.Name(), err)
		}
		r.replicas = append(r.replicas, s)
	}
	for _, s := range r.replicas {
		if err := awaitLinkUp(ctx, s.Addr()); err != nil {
			return err
		}
	}
	if r.sentinel, err = startSentinel(cfg.ServerBinary(), r.name, r.nodes[r.watched].Addr()); err != nil {
		return err
	}
	return r.awaitSentinelReplica(ctx)
}

// SentinelAddr is the address of the Sentinel.
func (r *Replicated) SentinelAddr() string { return r.sentinel.addr }

// MasterName is the name of the watched master set in Sentinel.
func (r *Replicated) MasterName() string { return r.name }

// Replica returns the address of master i's replica.
func (r *Replicated) Replica(i int) string { return r.replicas[i].Addr() }

// Lag delays by d every byte of the watched master's replication stream
// from now on: the replica gets the master's writes d late. HealLag ends it
// for the bytes sent from then on.
func (r *Replicated) Lag(d time.Duration) error {
	if _, err := r.link.Link(0, 0).Delay(netfault.Replies, d); err != nil {
		return err
	}
	return nil
}

// HealLag ends the lag of the watched master's replication stream for the
// bytes sent from now on; those delayed before keep their time.
func (r *Replicated) HealLag() { r.link.Link(0, 0).Heal() }

// Crash kills the watched master (SIGKILL) and drops what its replication
// stream still carried: its replica never gets the writes that a lag held
// back, as when a master dies before its replication buffer went out.
func (r *Replicated) Crash(ctx context.Context) error {
	l := r.link.Link(0, 0)
	if err := l.Cut(); err != nil { // nothing more reaches the replica
		return err
	}
	if err := r.nodes[r.watched].Kill(ctx); err != nil {
		return err
	}
	l.Reset() // what the cut held is dropped
	return nil
}

// MasterAddr returns the address of the watched set's master as Sentinel
// names it.
func (r *Replicated) MasterAddr(ctx context.Context) (string, error) {
	hp, err := redis.Strings(do(ctx, r.sentinel.addr, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", r.name))
	if err != nil || len(hp) != 2 {
		return "", fmt.Errorf("cluster: sentinel: master of %s: %v %v", r.name, hp, err)
	}
	return net.JoinHostPort(hp[0], hp[1]), nil
}

// AwaitFailover waits until Sentinel names a master of the watched set
// other than the one started as node Watched, and that master answers as
// one; it returns its address.
func (r *Replicated) AwaitFailover(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	old := r.nodes[r.watched].Addr()
	for {
		addr, err := r.MasterAddr(ctx)
		if err == nil && addr != old {
			if info, err := redis.String(do(ctx, addr, "INFO", "replication")); err == nil && infoValue(info, "role") == "master" {
				return addr, nil
			}
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return "", fmt.Errorf("cluster: no failover of %s: %w", r.name, err)
		}
	}
}

// Rejoin starts the old watched master again (empty, without persistence)
// as a replica of master, as Sentinel reconfigures a failed master that
// comes back, and returns once it is in sync.
func (r *Replicated) Rejoin(ctx context.Context, master string) error {
	n := r.nodes[r.watched]
	if err := n.Start(ctx); err != nil {
		return err
	}
	host, port, _ := net.SplitHostPort(master)
	if _, err := do(ctx, n.Addr(), "REPLICAOF", host, port); err != nil {
		return fmt.Errorf("cluster: %s: replicaof %s: %w", n.Name(), master, err)
	}
	return awaitLinkUp(ctx, n.Addr())
}

// Close stops Sentinel, the replicas and the masters.
func (r *Replicated) Close() error {
	var errs []error
	if r.sentinel != nil {
		errs = append(errs, r.sentinel.close())
	}
	for _, s := range r.replicas {
		errs = append(errs, s.Close())
	}
	if r.link != nil {
		r.link.Close()
	}
	return errors.Join(append(errs, r.Local.Close())...)
}

// awaitLinkUp waits until the replica at addr is in sync with its master.
func awaitLinkUp(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var info string
	for {
		reply, err := redis.String(do(ctx, addr, "INFO", "replication"))
		if err == nil {
			info = reply
		}
		if infoValue(info, "master_link_status") == "up" {
			return nil
		}
		if err := sleep(ctx, 10*time.Millisecond); err != nil {
			return fmt.Errorf("cluster: replica %s not in sync: %w\n%s", addr, err, info)
		}
	}
}

// awaitSentinelReplica waits until Sentinel lists the watched master's
// replica, so that it can fail over to it.
func (r *Replicated) awaitSentinelReplica(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		replicas, err := redis.Values(do(ctx, r.sentinel.addr, "SENTINEL", "REPLICAS", r.name))
		if err == nil && len(replicas) == 1 {
			return nil
		}
		if err := sleep(ctx, 20*time.Millisecond); err != nil {
			return fmt.Errorf("cluster: sentinel does not list the replica of %s: %w (%d listed, %v)", r.name, err, len(replicas), err)
		}
	}
}

// sentinelProc is a Sentinel process.
type sentinelProc struct {
	addr   string
	dir    string
	cmd    *exec.Cmd
	exited chan struct{}
}

// startSentinel starts bin --sentinel watching the master at master as
// name, and returns once it answers PING.
func startSentinel(bin, name, master string) (*sentinelProc, error) {
	port, err := redisproc.FreePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "sentinel-")
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	host, mport, _ := net.SplitHostPort(master)
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nlogfile %s\n"+
		"sentinel monitor %s %s %s 1\n"+
		"sentinel down-after-milliseconds %s %d\n"+
		"sentinel failover-timeout %s %d\n",
		port, dir, filepath.Join(dir, "sentinel.log"),
		name, host, mport, name, sentinelDownAfter.Milliseconds(), name, sentinelFailoverTimeout.Milliseconds())
	file := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cluster: %w", err)
	}
	cmd := exec.Command(bin, file, "--sentinel")
	cmd.Dir = dir
	// Its own process group, and gone with a killed harness (redisproc
	// does the same for the servers).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cluster: start %s --sentinel: %w", bin, err)
	}
	s := &sentinelProc{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, cmd: cmd, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := awaitPing(ctx, s.addr); err != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "sentinel.log"))
		s.close()
		return nil, fmt.Errorf("%w\n%s", err, log)
	}
	return s, nil
}

// close kills the Sentinel, waits for it and removes its directory.
func (s *sentinelProc) close() error {
	s.cmd.Process.Kill()
	<-s.exited
	return os.RemoveAll(s.dir)
}
