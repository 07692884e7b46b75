package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// common are the flags every subcommand has.
type common struct {
	nodes       string
	json        bool
	nodeTimeout duration
}

// newFlags returns a FlagSet for subcommand name with the common flags;
// nodeTimeout is the default of --node-timeout.
func newFlags(name string, nodeTimeout time.Duration) (*flag.FlagSet, *common) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by the caller
	c := &common{nodeTimeout: duration(nodeTimeout)}
	fs.StringVar(&c.nodes, "nodes", "", "")
	fs.BoolVar(&c.json, "json", false, "")
	fs.Var(&c.nodeTimeout, "node-timeout", "")
	return fs, c
}

const commonUsage = `  --nodes LIST            masters: comma-separated host:port or redis:// and
                          rediss:// URLs (default: $REDLOCK_NODES)
  --node-timeout DURATION bound on each call to one master
  --json                  machine-readable output (see "go doc" of the command)
  -h, --help              this help
`

// parseArgs parses fs's flags wherever they appear among the positional
// arguments, up to maxPos positionals. Everything after "--", beyond the
// positionals still missing, and everything from positional maxPos+1 on is
// returned verbatim as tail.
func parseArgs(fs *flag.FlagSet, args []string, maxPos int) (pos, tail []string, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, nil, err
		}
		used := len(args) - fs.NArg()
		rest := fs.Args()
		if used > 0 && args[used-1] == "--" {
			k := min(maxPos-len(pos), len(rest))
			return append(pos, rest[:k]...), rest[k:], nil
		}
		if len(rest) == 0 {
			return pos, nil, nil
		}
		if len(pos) == maxPos {
			return pos, rest, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// handleParse turns a parse error into the exit status: -h prints usage on
// stdout (0), anything else is a one-line usage error. ok is false when the
// subcommand must return code.
func handleParse(e env, name, usage string, err error) (code int, ok bool) {
	if err == nil {
		return 0, true
	}
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, usage)
		return exitOK, false
	}
	return e.usageError(name, err), false
}

// duration is a flag.Value for a duration written as Go writes one
// ("1m30s", "500ms") or, as flock(1) takes it, a number of seconds ("10",
// "0.5").
type duration time.Duration

func (d *duration) String() string { return time.Duration(*d).String() }

func (d *duration) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = duration(v)
	return nil
}

func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > float64(1<<62)/float64(time.Second) {
			return 0, fmt.Errorf("duration %q out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q (want e.g. 30s, 500ms or a number of seconds)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return v, nil
}

// keyFlags are the flags of the subcommands that name keys (run, inspect,
// unlock).
type keyFlags struct {
	prefix string
}

const prefixUsage = `  --prefix PREFIX         put PREFIX in front of every key on the masters, as
                          redlock.Config.KeyPrefix does (default:
                          $REDLOCK_PREFIX); every client of a lock must agree
`

// addKeyFlags adds --prefix to fs.
func addKeyFlags(fs *flag.FlagSet) *keyFlags {
	k := &keyFlags{}
	fs.StringVar(&k.prefix, "prefix", "", "")
	return k
}

// resolve returns the prefix: --prefix when given (even empty), else
// REDLOCK_PREFIX.
func (k *keyFlags) resolve(fs *flag.FlagSet, e env) string {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "prefix" })
	if set {
		return k.prefix
	}
	return e.getenv("REDLOCK_PREFIX")
}
