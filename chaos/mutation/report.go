package mutation

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Print writes the report as a table: one row per defect with its outcome,
// the scenarios that caught it and those that ran, then the score. Missed
// and broken defects are listed after it with their notes.
func (r *Report) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEFECT\tOUTCOME\tCAUGHT BY\tSCENARIOS RUN\tTIME")
	row := func(name string, res Result, outcome string) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\n", name, outcome, dash(strings.Join(res.Failed, ",")),
			orAll(res.Scenarios), res.Elapsed.Round(100*time.Millisecond))
	}
	base := "pass"
	switch {
	case r.Baseline.Outcome != Missed:
		base = "FAIL (" + string(r.Baseline.Outcome) + ")"
	case r.Baseline.Detail == baselineSkipped:
		base = baselineSkipped
	}
	row("(baseline, no defect)", r.Baseline, base)
	for _, res := range r.Results {
		outcome := string(res.Outcome)
		if res.Runs > 0 {
			outcome += fmt.Sprintf(" %d/%d", res.Failing, res.Runs)
		}
		row(res.Defect.Name, res, outcome)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nscore: %d/%d defects caught; baseline %s; %v in all\n",
		r.Caught(), len(r.Results), base, r.Elapsed.Round(time.Second))
	if r.Baseline.Outcome != Missed {
		fmt.Fprintf(w, "  the baseline must pass before any defect counts: %s (log %s)\n",
			dash(r.Baseline.Detail+strings.Join(r.Baseline.Failed, ",")), r.Baseline.Log)
	}
	var chance []string
	for _, res := range r.Results {
		switch {
		case res.Runs > 0 && res.Failing < res.Runs:
			chance = append(chance, fmt.Sprintf("%s %d/%d", res.Defect.Name, res.Failing, res.Runs))
		case res.Runs == 0 && res.Defect.Chance != "":
			chance = append(chance, fmt.Sprintf("%s (%s; this run: %s)", res.Defect.Name, res.Defect.Chance, res.Outcome))
		}
	}
	if len(chance) > 0 {
		fmt.Fprintf(w, "  caught by chance, not in every run (work left): %s\n", strings.Join(chance, ", "))
	}
	for _, res := range r.Results {
		if res.Outcome == Caught || (res.Outcome == Missed && res.Defect.Chance != "") {
			continue
		}
		fmt.Fprintf(w, "  %s %s: %s\n", res.Outcome, res.Defect.Name, res.Defect.Description)
		if res.Detail != "" {
			fmt.Fprintf(w, "      %s\n", res.Detail)
		}
		if res.Defect.Note != "" {
			fmt.Fprintf(w, "      note: %s\n", res.Defect.Note)
		}
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
