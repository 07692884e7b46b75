package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
)

// The pipelined implementation is not a library: it is the prototype of the
// auto-pipelined connection that pool/ now uses by default (pool/mux.go),
// kept here as a floor to measure the library against. Each node has one connection that every caller
// shares. A caller queues its command; whoever finds no write in progress
// writes everything queued with one flush (flat combining), so concurrent
// commands to a node cost one write system call; one reader goroutine per
// node matches replies to commands in order and hands each to its caller.
// A fan-out therefore starts no goroutine, borrows no connection, and
// returns at the quorum. Because one node's commands travel in order on one
// connection, an unlock can never overtake its lock's SET.

// pipeTimeout bounds each fan-out, like quorumlock's default node timeout.
const pipeTimeout = 50 * time.Millisecond

// pipeMaxInflight bounds the unanswered commands per node: beyond it a node
// is failed at once, without sending, so a frozen node costs neither
// goroutines nor connections.
const pipeMaxInflight = 4096

var errPipeBusy = errors.New("bench: node has too many unanswered commands")

// pipeResult is one node's answer to one fan-out.
type pipeResult struct {
	ok  bool
	err error
}

// pipeReq is one command waiting for its reply.
type pipeReq struct {
	cmd  string
	args []any
	done chan<- pipeResult
}

// pipeNode is the shared connection to one node.
type pipeNode struct {
	addr string
	dial time.Duration

	mu       sync.Mutex
	queue    []pipeReq
	spare    []pipeReq
	flushing bool
	conn     redis.Conn   // nil until dialled, and after a failure
	inflight chan pipeReq // the reader's FIFO for conn
}

func (n *pipeNode) submit(r pipeReq) {
	n.mu.Lock()
	n.queue = append(n.queue, r)
	if n.flushing {
		n.mu.Unlock()
		return
	}
	n.flushing = true
	for len(n.queue) > 0 {
		batch := n.queue
		n.queue = n.spare[:0]
		conn, inflight := n.conn, n.inflight
		n.mu.Unlock()
		if conn == nil {
			conn, inflight = n.connect(batch)
		}
		if conn != nil {
			n.write(conn, inflight, batch)
		}
		clear(batch)
		n.mu.Lock()
		n.spare = batch[:0]
	}
	n.flushing = false
	n.mu.Unlock()
}

// connect dials the node and starts its reader; on failure it fails batch.
func (n *pipeNode) connect(batch []pipeReq) (redis.Conn, chan pipeReq) {
	c, err := redis.Dial("tcp", n.addr, redis.DialConnectTimeout(n.dial), redis.DialWriteTimeout(pipeTimeout))
	if err != nil {
		for _, r := range batch {
			r.done <- pipeResult{err: err}
		}
		return nil, nil
	}
	inflight := make(chan pipeReq, pipeMaxInflight)
	n.mu.Lock()
	n.conn, n.inflight = c, inflight
	n.mu.Unlock()
	go n.read(c, inflight)
	return c, inflight
}

// write sends batch with one flush; only the flusher calls it.
func (n *pipeNode) write(c redis.Conn, inflight chan pipeReq, batch []pipeReq) {
	var err error
	for _, r := range batch {
		if len(inflight) == cap(inflight) {
			r.done <- pipeResult{err: errPipeBusy}
			continue
		}
		if err = c.Send(r.cmd, r.args...); err != nil {
			r.done <- pipeResult{err: err}
			continue
		}
		inflight <- r
	}
	if err == nil {
		err = c.Flush()
	}
	if err != nil {
		n.drop(c)
	}
}

// read hands each reply to its caller until the connection fails, then
// fails whatever is still waiting.
func (n *pipeNode) read(c redis.Conn, inflight chan pipeReq) {
	for r := range inflight {
		reply, err := c.Receive()
		var rerr redis.Error
		if err != nil && !errors.As(err, &rerr) {
			r.done <- pipeResult{err: err}
			n.drop(c)
			for {
				select {
				case r, ok := <-inflight:
					if !ok {
						return
					}
					r.done <- pipeResult{err: err}
				default:
					return
				}
			}
		}
		r.done <- pipeResult{ok: reply == "OK" || reply == int64(1), err: err}
	}
}

// drop forgets a failed connection so that the next submit dials again.
func (n *pipeNode) drop(c redis.Conn) {
	n.mu.Lock()
	if n.conn == c {
		n.conn = nil
	}
	n.mu.Unlock()
	c.Close()
}

// close ends the connection and its reader; no submit may run.
func (n *pipeNode) close() {
	n.mu.Lock()
	c, inflight := n.conn, n.inflight
	n.conn = nil
	n.mu.Unlock()
	if c != nil {
		c.Close()
		close(inflight)
	}
}

// pipeLocker runs lock cycles over pipeNodes.
type pipeLocker struct {
	nodes     []*pipeNode
	ttlMillis int64
	quorum    int
	unlockSHA string
}

func newPipelined(addrs []string, s Settings) (Locker, error) {
	l := &pipeLocker{ttlMillis: s.TTL.Milliseconds(), quorum: len(addrs)/2 + 1}
	for _, addr := range addrs {
		c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(s.DialTimeout))
		if err != nil {
			l.Close()
			return nil, err
		}
		l.unlockSHA, err = redis.String(c.Do("SCRIPT", "LOAD", rawUnlockSrc))
		c.Close()
		if err != nil {
			l.Close()
			return nil, err
		}
		l.nodes = append(l.nodes, &pipeNode{addr: addr, dial: s.DialTimeout})
	}
	return l, nil
}

func (l *pipeLocker) NewMutex(key string) Mutex { return &pipeMutex{l: l, key: key} }

func (l *pipeLocker) Close() error {
	for _, n := range l.nodes {
		n.close()
	}
	return nil
}

// fanout sends one command to every node and waits until a quorum said
// yes, or a quorum can no longer say yes, or pipeTimeout passed. The
// stragglers' answers go to a buffered channel nobody reads any more.
func (l *pipeLocker) fanout(m *pipeMutex, cmd string, args ...any) bool {
	done := make(chan pipeResult, len(l.nodes))
	for _, n := range l.nodes {
		n.submit(pipeReq{cmd: cmd, args: args, done: done})
	}
	if m.timer == nil {
		m.timer = time.NewTimer(pipeTimeout)
	} else {
		m.timer.Reset(pipeTimeout)
	}
	defer m.timer.Stop()
	yes, no := 0, 0
	for yes < l.quorum && no <= len(l.nodes)-l.quorum {
		select {
		case r := <-done:
			if r.ok {
				yes++
			} else {
				no++
			}
		case <-m.timer.C:
			return false
		}
	}
	return yes >= l.quorum
}

type pipeMutex struct {
	l     *pipeLocker
	key   string
	token string
	timer *time.Timer
}

func (m *pipeMutex) Lock(context.Context) error {
	var b [16]byte
	rand.Read(b[:])
	m.token = hex.EncodeToString(b[:])
	if m.l.fanout(m, "SET", m.key, m.token, "NX", "PX", m.l.ttlMillis) {
		return nil
	}
	m.l.fanout(m, "EVALSHA", m.l.unlockSHA, 1, m.key, m.token)
	return ErrNotAcquired
}

func (m *pipeMutex) Unlock(context.Context) error {
	if !m.l.fanout(m, "EVALSHA", m.l.unlockSHA, 1, m.key, m.token) {
		return ErrNotHeld
	}
	return nil
}
