package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quorumlock/quorumlock/chaos/scenario"
)

// A scenario that hung or panicked carries a goroutine dump (its Result's
// Dump): the text report prints its head, the JSON report all of it, and
// WriteDumps puts each in a file of its own beside the timelines.

// dumpLines bounds the lines of a goroutine dump printed in the text
// report; the whole dump is in its file and in the JSON report.
const dumpLines = 60

// dump writes the head of r's goroutine dump, and where the rest is.
func dump(w io.Writer, r scenario.Result, file string) {
	lines := strings.Split(strings.TrimRight(r.Dump, "\n"), "\n")
	where := "the JSON report (--json) has all of it"
	if file != "" {
		where = "all of it in " + file
	}
	fmt.Fprintf(w, "   ABORTED:   %s; %d lines of goroutine stacks, %s:\n", r.Aborted, len(lines), where)
	for i, l := range lines {
		if i == dumpLines {
			fmt.Fprintf(w, "     ... %d more lines\n", len(lines)-i)
			break
		}
		fmt.Fprintf(w, "     %s\n", l)
	}
}

// WriteDumps writes the goroutine dump of each scenario that hung or
// panicked to dir, as <scenario>-<backend>-goroutines.txt, and returns the
// path of each.
func WriteDumps(dir string, results []scenario.Result) (map[string]string, error) {
	paths := map[string]string{}
	for _, r := range results {
		if r.Dump == "" {
			continue
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return paths, fmt.Errorf("report: %w", err)
		}
		p := filepath.Join(dir, r.Scenario+"-"+r.Backend+"-goroutines.txt")
		if err := os.WriteFile(p, []byte(r.Dump), 0o644); err != nil {
			return paths, fmt.Errorf("report: %w", err)
		}
		paths[r.Scenario] = p
	}
	return paths, nil
}
