package cluster

import (
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
)

// WAITAOF, which durable grants need (redlock.Durability.Local), came in
// Redis 7.2; every Valkey has it (Valkey forked from Redis 7.2.4). Debian
// 12 ships Redis 7.0, so the scenarios about durable grants look for a
// server that has it: the one the run names, else valkey-server.

// WaitAOFServer returns the server binary for a local cluster whose masters
// must answer WAITAOF: preferred (a name on PATH or a path, "" for
// Config.ServerBinary's default) when it has WAITAOF, else valkey-server
// when it is installed; or an error that says why neither will do.
func WaitAOFServer(preferred string) (string, error) {
	if preferred == "" {
		preferred = Config{}.ServerBinary()
	}
	why := []string{}
	for _, bin := range []string{preferred, "valkey-server"} {
		ok, version, err := hasWaitAOF(bin)
		switch {
		case err != nil:
			why = append(why, err.Error())
		case ok:
			return bin, nil
		default:
			why = append(why, fmt.Sprintf("%s is %s", bin, version))
		}
	}
	return "", fmt.Errorf("%w: no server with WAITAOF (Redis 7.2+ or Valkey) found: %v; install valkey-server (scripts/ensure-valkey.sh)", ErrUnsupported, why)
}

// serverVersion reads "Redis server v=7.0.15 ..." and "Valkey server
// v=8.0.1 ...".
var serverVersion = regexp.MustCompile(`^(\w+) server v=(\d+)\.(\d+)`)

// hasWaitAOF reports whether the server binary bin answers WAITAOF, from
// its --version, which it returns as "Redis 7.0" or the like.
func hasWaitAOF(bin string) (ok bool, version string, err error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return false, "", fmt.Errorf("cluster: %s --version: %w", bin, err)
	}
	m := serverVersion.FindSubmatch(out)
	if m == nil {
		return false, "", fmt.Errorf("cluster: %s --version: unexpected %q", bin, out)
	}
	name := string(m[1])
	major, _ := strconv.Atoi(string(m[2]))
	minor, _ := strconv.Atoi(string(m[3]))
	version = fmt.Sprintf("%s %d.%d", name, major, minor)
	if name == "Valkey" {
		return true, version, nil
	}
	return major > 7 || major == 7 && minor >= 2, version, nil
}
