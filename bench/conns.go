package bench

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// tcpConns counts the open client-side TCP connections to each port in
// ports, from /proc/net/tcp and /proc/net/tcp6: connections established,
// being set up, or closed by the server but not yet by the client. Every
// connection to the benchmark's Redis servers comes from this process, so
// the count is the clients' view whatever library holds them. It returns
// nil where /proc is not available.
func tcpConns(ports []int) map[int]int {
	want := make(map[int]bool, len(ports))
	for _, p := range ports {
		want[p] = true
	}
	counts := make(map[int]int, len(ports))
	found := false
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		found = true
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			// sl local_address rem_address st ...
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 {
				continue
			}
			switch fields[3] {
			case "01", "02", "08": // ESTABLISHED, SYN_SENT, CLOSE_WAIT
			default:
				continue
			}
			_, portHex, ok := strings.Cut(fields[2], ":")
			if !ok {
				continue
			}
			port, err := strconv.ParseInt(portHex, 16, 32)
			if err == nil && want[int(port)] {
				counts[int(port)]++
			}
		}
		f.Close()
	}
	if !found {
		return nil
	}
	return counts
}
