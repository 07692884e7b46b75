package nodeutil

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// A connection's first words, before a client library takes it over: the
// commands that read a master's identity go out on the raw connection as
// RESP2 (every server answers it before a HELLO), all at once, and their
// replies are read back, one for each. The server sends nothing else
// before the library's own set-up, so nothing that is read here belongs
// to the library.

// respError is an error reply, with the server's message.
type respError string

func (e respError) Error() string { return string(e) }

// respRound writes the commands cmds (each a name and its arguments) on c
// at once and reads one reply for each: a simple or bulk string as a
// string, an integer as int64, an array as []any, a nil as nil, and an
// error reply as a respError in errs (nil for the others). err is a
// transport or protocol error, after which c is no good.
func respRound(c net.Conn, cmds [][]string) (replies []any, errs []error, err error) {
	var req []byte
	for _, cmd := range cmds {
		req = append(req, '*')
		req = strconv.AppendInt(req, int64(len(cmd)), 10)
		req = append(req, "\r\n"...)
		for _, arg := range cmd {
			req = append(req, '$')
			req = strconv.AppendInt(req, int64(len(arg)), 10)
			req = append(req, "\r\n"...)
			req = append(req, arg...)
			req = append(req, "\r\n"...)
		}
	}
	if _, err := c.Write(req); err != nil {
		return nil, nil, err
	}
	r := bufio.NewReader(c)
	replies, errs = make([]any, len(cmds)), make([]error, len(cmds))
	for i := range cmds {
		reply, err := readReply(r)
		var rerr respError
		switch {
		case errors.As(err, &rerr):
			errs[i] = rerr
		case err != nil:
			return nil, nil, err
		default:
			replies[i] = reply
		}
	}
	return replies, errs, nil
}

// errProtocol is the error of a reply that is not RESP2.
var errProtocol = errors.New("nodeutil: malformed reply")

// readReply reads one RESP2 reply; an error reply is a respError.
func readReply(r *bufio.Reader) (any, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	line, ok := bytes.CutSuffix(line, []byte("\r\n"))
	if !ok || len(line) == 0 {
		return nil, errProtocol
	}
	body := string(line[1:])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, respError(body)
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %q", errProtocol, line)
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		switch {
		case err != nil || n < -1:
			return nil, fmt.Errorf("%w: %q", errProtocol, line)
		case n == -1:
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		switch {
		case err != nil || n < -1:
			return nil, fmt.Errorf("%w: %q", errProtocol, line)
		case n == -1:
			return nil, nil
		}
		elems := make([]any, n)
		for i := range elems {
			if elems[i], err = readReply(r); err != nil {
				var rerr respError
				if !errors.As(err, &rerr) {
					return nil, err
				}
				elems[i] = rerr
			}
		}
		return elems, nil
	}
	return nil, fmt.Errorf("%w: %q", errProtocol, line)
}
