package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/quorumlock/quorumlock/chaos/scenario"
)

// Cell is what the suite drove through one entry point in one process
// lifetime: the scenarios and their verdicts.
type Cell struct {
	EntryPoint string   `json:"entry_point"`
	Lifetime   string   `json:"lifetime"`
	Scenarios  []string `json:"scenarios"`
	Verdicts   []string `json:"verdicts"`
}

// Driven gathers, per entry point and process lifetime, the scenarios of
// results that drove them (Result.Driven), in the order of results.
func Driven(results []scenario.Result) []Cell {
	var cells []Cell
	at := map[[2]string]int{}
	for _, r := range results {
		if r.Driven == nil {
			continue
		}
		k := [2]string{string(r.Driven.Transport), r.Driven.Lifetime}
		i, ok := at[k]
		if !ok {
			i = len(cells)
			at[k] = i
			cells = append(cells, Cell{EntryPoint: k[0], Lifetime: k[1]})
		}
		cells[i].Scenarios = append(cells[i].Scenarios, r.Scenario)
		cells[i].Verdicts = append(cells[i].Verdicts, string(r.Verdict))
	}
	return cells
}

// drivenTable writes what Driven gathers as a table: an entry point per
// row, a lifetime per column, each cell its scenarios' verdicts.
func drivenTable(w io.Writer, results []scenario.Result) error {
	cells := Driven(results)
	if len(cells) == 0 {
		return nil
	}
	var entries, lifetimes []string
	seen := map[string]bool{}
	cell := map[[2]string]Cell{}
	for _, c := range cells {
		if !seen["e"+c.EntryPoint] {
			seen["e"+c.EntryPoint] = true
			entries = append(entries, c.EntryPoint)
		}
		if !seen["l"+c.Lifetime] {
			seen["l"+c.Lifetime] = true
			lifetimes = append(lifetimes, c.Lifetime)
		}
		cell[[2]string{c.EntryPoint, c.Lifetime}] = c
	}
	fmt.Fprintln(w, "\nDriven, per entry point and process lifetime (the scenarios' verdicts):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "ENTRY POINT\t%s\t\n", strings.ToUpper(strings.Join(lifetimes, "\t")))
	for _, e := range entries {
		row := []string{e}
		for _, l := range lifetimes {
			c, ok := cell[[2]string{e, l}]
			if !ok {
				row = append(row, "-")
				continue
			}
			parts := make([]string, len(c.Scenarios))
			for i := range c.Scenarios {
				parts[i] = c.Scenarios[i] + " " + c.Verdicts[i]
			}
			row = append(row, strings.Join(parts, ", "))
		}
		fmt.Fprintf(tw, "%s\t\n", strings.Join(row, "\t"))
	}
	return tw.Flush()
}
