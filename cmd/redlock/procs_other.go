//go:build !linux

package main

import (
	"errors"
	"os"
	"syscall"
)

// becomeSubreaper is Linux only: elsewhere the orphans of a job go to
// init, and only those still in its process group can be found.
func becomeSubreaper() error {
	return errors.New("no subreaper on this system")
}

// dieWithParent does nothing: no parent-death signal on this system.
func dieWithParent(*syscall.SysProcAttr) {}

// selfExe is the path of this binary, as os.Executable finds it.
func selfExe() (string, error) { return os.Executable() }

// descendants finds nothing on this system: without /proc the job is its
// process group only.
func descendants(int) []int { return nil }
