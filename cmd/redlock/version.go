package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/quorumlock/quorumlock"
)

const versionUsage = `usage: redlock version [--json]

Prints redlock's version, as the go command recorded it when it built
redlock (v0.1.0 after "go install .../cmd/redlock@v0.1.0", "(devel)" for a
build in a checkout, with its revision), and the version of the quorumlock
module it was built from, as that module's versions file records it.

Flags:
  --json                  machine-readable output
  -h, --help              this help

Example:
  redlock version --json
`

// versionReport is what "redlock version" prints.
type versionReport struct {
	// Command is redlock's version from the go command's build
	// information: the quorumlock module's version in the build, or
	// "(devel)" for a build in a checkout.
	Command string `json:"command"`
	// Revision and Modified are the checkout's, when the build recorded them.
	Revision string `json:"revision,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// Module is the module redlock belongs to, and Core its version as its
	// versions file records it (quorumlock.Version).
	Module string `json:"module"`
	Core   string `json:"core"`
	// Go is the Go version redlock was built with.
	Go string `json:"go"`
}

func cmdVersion(args []string, e env) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	err := fs.Parse(args)
	if code, ok := handleParse(e, "version", versionUsage, err); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return e.usageError("version", fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	bi, _ := debug.ReadBuildInfo()
	rep := newVersionReport(bi)
	if *asJSON {
		writeJSON(e.stdout, rep)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "redlock %s", rep.Command)
	if rep.Revision != "" {
		fmt.Fprintf(e.stdout, " (revision %s", rep.Revision)
		if rep.Modified {
			fmt.Fprint(e.stdout, ", modified")
		}
		fmt.Fprint(e.stdout, ")")
	}
	fmt.Fprintf(e.stdout, "\n%s %s\n%s\n", rep.Module, rep.Core, rep.Go)
	return exitOK
}

// newVersionReport reads redlock's version from bi (nil when the binary
// has no build information): the version of the quorumlock module in the
// build, whether it is the main module (go install ...@version, or a build
// in a checkout) or a dependency (a build from another module).
func newVersionReport(bi *debug.BuildInfo) versionReport {
	rep := versionReport{Command: "(devel)", Module: quorumlock.Path, Core: quorumlock.Version(), Go: runtime.Version()}
	if bi == nil {
		return rep
	}
	mod := &bi.Main
	if mod.Path != quorumlock.Path {
		mod = nil
		for _, d := range bi.Deps {
			if d.Path == quorumlock.Path {
				mod = d
				if d.Replace != nil {
					mod = d.Replace // a directory's Version is ""
				}
			}
		}
	}
	if mod != nil && mod.Version != "" {
		rep.Command = mod.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rep.Revision = s.Value
		case "vcs.modified":
			rep.Modified = s.Value == "true"
		}
	}
	return rep
}
