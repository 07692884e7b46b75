package pool

import "github.com/gomodule/redigo/redis"

// Reading. Redis answers a connection's commands in the order they came,
// so the reader goroutine holds the oldest command sent (queue.next),
// reads its reply, pops it and completes it, one after the other. A
// transport error, or no reply within the stall timeout (a frozen
// master), fails the pipe.

// readLoop is the reader goroutine.
func (p *pipe) readLoop() {
	for {
		r, err := p.q.next()
		if err != nil || !p.receive(r) {
			return
		}
	}
}

// receive reads the reply of r, the oldest command sent, and completes r.
// A transport error or no reply within the stall timeout fails p; r then
// gets p's error, and receive reports false.
func (p *pipe) receive(r *request) bool {
	reply, err := redis.ReceiveWithTimeout(p.c, p.stall)
	if _, isReply := err.(redis.Error); err != nil && !isReply {
		p.finish(r, nil, p.failIO(err))
		return false
	}
	p.q.done(r)
	p.finish(r, reply, err)
	return true
}
