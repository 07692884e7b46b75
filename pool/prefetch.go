package pool

import "net"

// prefetchConn is the connection redigo reads through: the bytes that a
// solo read's wait took off the socket (idleChecker.wait) come first, so
// that the wait for a reply and its first read are one system call, as
// with a blocking read. Only the goroutine holding the oldest command sent
// on the connection (queue.go) touches it.
type prefetchConn struct {
	net.Conn
	buf        []byte // made by the first wait
	head, tail int    // buf[head:tail] is read next
}

// prefetchSize is the most one wait takes off the socket: redigo's read
// buffer, so that its next fill takes all of it.
const prefetchSize = 4096

func (c *prefetchConn) Read(p []byte) (int, error) {
	if c.head == c.tail {
		return c.Conn.Read(p)
	}
	n := copy(p, c.buf[c.head:c.tail])
	c.head += n
	if c.head == c.tail {
		c.head, c.tail = 0, 0
	}
	return n, nil
}
