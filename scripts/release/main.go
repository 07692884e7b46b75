package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

const usage = "usage: release proxy DIR | release sync"

func run(args []string, out io.Writer) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	switch {
	case len(args) == 2 && args[0] == "proxy":
		mods, err := modules(root)
		if err != nil {
			return err
		}
		if err := writeProxy(root, mods, args[1]); err != nil {
			return err
		}
		for _, m := range mods {
			fmt.Fprintf(out, "%s@%s\n", m.Path, m.Version)
		}
		return nil
	case len(args) == 1 && args[0] == "sync":
		mods, err := modules(root)
		if err != nil {
			return err
		}
		return syncRequires(root, mods)
	}
	return fmt.Errorf("%s", usage)
}
