package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// A power loss under a master: what a crash of its machine does and a
// killed process does not. A master with appendfsync everysec writes
// every command to its AOF before it replies, so the page cache keeps it
// across a SIGKILL, and fsyncs at most once a second: an OS crash or a
// power cut loses the writes made since its last fsync. PowerLoss
// emulates that on the local backend: the process is killed and its AOF
// cut back to what the last fsync had put on disk.
//
// Which bytes were fsynced is known exactly only right after an fsync the
// harness caused itself. Sync switches the master to appendfsync always
// for one write, which the master fsyncs before it replies (noting the
// time of that fsync as its last one), and back to everysec. With
// everysec a master starts its next fsync no sooner than a second after
// its last one (server.aof_last_fsync + 1000ms in aof.c, Redis 7 and
// Valkey 8), so until then its AOF on disk is what it was at the Sync,
// whatever it wrote since. PowerLoss refuses a loss later than
// FsyncWindow after the Sync: it would not know what the disk held.
//
// Sync assumes that nothing else writes to the master while it runs (the
// scenarios call it on a quiet master): a write between its fsync and its
// reading of the AOF's size would count as fsynced.

// FsyncWindow is how long after a Sync a PowerLoss knows what the master's
// disk holds: less than the second after which an appendfsync everysec
// master may fsync again, by a margin for the scheduling of the harness.
const FsyncWindow = 800 * time.Millisecond

// ErrLateLoss is the error of a PowerLoss that came more than FsyncWindow
// after its Sync: the master may have fsynced since.
var ErrLateLoss = errors.New("cluster: power loss too long after the fsync: what the disk holds is not known")

// FsyncNode is a Node whose AOF the harness can cut back to its last
// fsync: the local backend's nodes with PersistenceEverysec.
type FsyncNode interface {
	// Sync makes the node fsync its AOF now, and returns the mark that a
	// power loss within FsyncWindow cuts the AOF back to.
	Sync(ctx context.Context) (Synced, error)
	// LosePower kills the node and cuts its AOF back to s, and returns
	// how many bytes the cut removed (what the node wrote since s). The
	// node stays down; Start brings it back with what the AOF kept.
	LosePower(ctx context.Context, s Synced) (lost int64, err error)
}

// Synced marks the AOF of a node as fsynced at one moment (Sync).
type Synced struct {
	file string    // the node's incremental AOF file
	size int64     // its size at the fsync
	at   time.Time // before the fsync
}

// Sync makes n fsync its AOF now (see FsyncNode), or returns
// ErrUnsupported when n is not an FsyncNode.
func Sync(ctx context.Context, n Node) (Synced, error) {
	f, ok := n.(FsyncNode)
	if !ok {
		return Synced{}, fmt.Errorf("%w: %s cannot lose its unsynced AOF (the local backend with everysec can)", ErrUnsupported, n.Name())
	}
	return f.Sync(ctx)
}

// PowerLoss kills n and cuts its AOF back to s, as a crash of its machine
// after the fsync that s marks would (see FsyncNode).
func PowerLoss(ctx context.Context, n Node, s Synced) (lost int64, err error) {
	f, ok := n.(FsyncNode)
	if !ok {
		return 0, fmt.Errorf("%w: %s cannot lose its unsynced AOF", ErrUnsupported, n.Name())
	}
	return f.LosePower(ctx, s)
}

// fsyncBarrier is the key Sync writes: outside every run's keys.
const fsyncBarrier = "chaos-fsync-barrier"

// Sync implements FsyncNode.
func (n *localNode) Sync(ctx context.Context) (Synced, error) {
	if !n.everysec {
		return Synced{}, fmt.Errorf("%w: %s does not run with appendfsync everysec", ErrUnsupported, n.name)
	}
	if _, err := do(ctx, n.Addr(), "CONFIG", "SET", "appendfsync", "always"); err != nil {
		return Synced{}, fmt.Errorf("cluster: sync %s: %w", n.name, err)
	}
	at := time.Now()
	_, err := do(ctx, n.Addr(), "SET", fsyncBarrier, at.UnixNano())
	if _, rerr := do(context.WithoutCancel(ctx), n.Addr(), "CONFIG", "SET", "appendfsync", "everysec"); err == nil {
		err = rerr
	}
	if err != nil {
		return Synced{}, fmt.Errorf("cluster: sync %s: %w", n.name, err)
	}
	file, err := incrementalAOF(n.s.Dir())
	if err != nil {
		return Synced{}, err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return Synced{}, fmt.Errorf("cluster: sync %s: %w", n.name, err)
	}
	return Synced{file: file, size: fi.Size(), at: at}, nil
}

// LosePower implements FsyncNode.
func (n *localNode) LosePower(ctx context.Context, s Synced) (int64, error) {
	if s.file == "" {
		return 0, fmt.Errorf("cluster: power loss on %s without a Sync", n.name)
	}
	if late := time.Since(s.at); late > FsyncWindow {
		return 0, fmt.Errorf("%w: %s, %v after the fsync (at most %v)", ErrLateLoss, n.name, late.Round(time.Millisecond), FsyncWindow)
	}
	if err := n.Kill(ctx); err != nil {
		return 0, err
	}
	fi, err := os.Stat(s.file)
	if err != nil {
		return 0, fmt.Errorf("cluster: power loss on %s: %w", n.name, err)
	}
	if err := os.Truncate(s.file, s.size); err != nil {
		return 0, fmt.Errorf("cluster: power loss on %s: %w", n.name, err)
	}
	return fi.Size() - s.size, nil
}

// incrementalAOF returns the path of the incremental AOF file that the
// server in dir appends to: the last file of type i in its manifest
// (multi-part AOF, Redis 7 and Valkey; the default appenddirname and
// appendfilename).
func incrementalAOF(dir string) (string, error) {
	aofDir := filepath.Join(dir, "appendonlydir")
	f, err := os.Open(filepath.Join(aofDir, "appendonly.aof.manifest"))
	if err != nil {
		return "", fmt.Errorf("cluster: AOF manifest: %w", err)
	}
	defer f.Close()
	var incr string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "file appendonly.aof.1.incr.aof seq 1 type i"
		fields := strings.Fields(sc.Text())
		if len(fields) >= 6 && fields[0] == "file" && fields[len(fields)-2] == "type" && fields[len(fields)-1] == "i" {
			incr = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("cluster: AOF manifest: %w", err)
	}
	if incr == "" {
		return "", fmt.Errorf("cluster: no incremental AOF in %s", aofDir)
	}
	return filepath.Join(aofDir, incr), nil
}
