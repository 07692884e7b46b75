//go:build linux

package main

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// prSetChildSubreaper is prctl's PR_SET_CHILD_SUBREAPER (linux/prctl.h).
const prSetChildSubreaper = 36

// becomeSubreaper makes this process the reaper of its orphaned
// descendants: a process of the job whose parent dies (a daemon that
// forked twice and called setsid included) becomes a child of this
// process instead of init's, so that it can still be found, killed and
// waited for.
func becomeSubreaper() error {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return os.NewSyscallError("prctl(PR_SET_CHILD_SUBREAPER)", errno)
	}
	return nil
}

// dieWithParent makes a child started with attr get SIGKILL when the
// thread that started it dies (PR_SET_PDEATHSIG).
func dieWithParent(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }

// selfExe is the path that starts this very binary again, even when its
// file was replaced or removed since it started (a deploy).
func selfExe() (string, error) { return "/proc/self/exe", nil }

// descendants returns the live processes below root (its children, their
// children, ...), zombies left out, as /proc shows them now.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := liveParent(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	var out []int
	queue := children[root]
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		out = append(out, pid)
		queue = append(queue, children[pid]...)
	}
	return out
}

// liveParent reads the parent of pid from /proc/PID/stat; ok is false when
// pid is gone or a zombie.
func liveParent(pid int) (ppid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 || string(f[0]) == "Z" || string(f[0]) == "X" {
		return 0, false
	}
	ppid, err = strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
