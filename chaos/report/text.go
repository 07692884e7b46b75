package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/scenario"
)

// Text writes the report of results: a summary table, then each scenario's
// invariant, expectation, checks, notes and how to replay it. svgs maps a
// scenario to its timeline file, if one was written.
func Text(w io.Writer, results []scenario.Result, svgs map[string]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SCENARIO\tKIND\tBACKEND\tVERDICT\tACQUIRED\tFAULTS\tOVERLAPS\tVIOLATIONS\tSTALE REJECTED\tCHECKERS\tTIME\tSEED\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%v\t%d\t\n", r.Scenario, r.Kind, r.Backend, r.Verdict,
			r.Acquisitions, r.Faults, r.Overlaps, others(r), r.StaleRejected, agreement(r), r.Elapsed.Round(100*time.Millisecond), r.Seed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n== %s [%s] on %s, seed %d\n", r.Scenario, r.Verdict, r.Backend, r.Seed)
		fmt.Fprintf(w, "   invariant: %s\n", r.Invariant)
		fmt.Fprintf(w, "   expected:  %s\n", r.Expect)
		fmt.Fprintf(w, "   observed:  %s\n", r.Outcome)
		fmt.Fprintf(w, "   counts:    %d attempts, %d acquisitions, %d faults, %d overlaps, %d writes (%d late, %d stale rejected)\n",
			r.Attempts, r.Acquisitions, r.Faults, r.Overlaps, r.Writes, r.LateWrites, r.StaleRejected)
		fmt.Fprintf(w, "   invariants: %s\n", byInvariant(r))
		fmt.Fprintf(w, "   checkers:  intervals %s; porcupine %s; %s\n", r.Checker, r.Linearize, agreement(r))
		for i, v := range r.Violation {
			if i == 3 {
				fmt.Fprintf(w, "   ... %d more violations\n", len(r.Violation)-i)
				break
			}
			fmt.Fprintf(w, "   violation: %v\n", v)
		}
		for _, c := range r.Checks {
			mark := "ok  "
			if !c.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(w, "   %s %s: %s\n", mark, c.Name, c.Detail)
		}
		for i, o := range r.Overlap {
			if i == 3 {
				fmt.Fprintf(w, "   ... %d more overlaps\n", r.Overlaps-i)
				break
			}
			fmt.Fprintf(w, "   overlap on %s for %v:\n     %v\n     %v\n", o.Key, (o.To() - o.From()).Round(time.Microsecond), o.A, o.B)
		}
		for _, l := range r.Log {
			fmt.Fprintf(w, "   note: %s\n", l)
		}
		if p := svgs[r.Scenario]; p != "" {
			fmt.Fprintf(w, "   timeline:  %s\n", p)
		}
		fmt.Fprintf(w, "   replay:    go run ./cmd/chaos --backend %s --scenario %s --seed %d\n", r.Backend, r.Scenario, r.Seed)
	}
	fmt.Fprintf(w, "\n%s\n", Summary(results))
	return nil
}

// others counts the violations of r other than overlaps.
func others(r scenario.Result) int {
	n := 0
	for inv, k := range r.Violations {
		if inv != checker.MutualExclusion {
			n += k
		}
	}
	return n
}

// byInvariant lists r's violations per invariant, in report order.
func byInvariant(r scenario.Result) string {
	var parts []string
	for _, inv := range checker.Invariants {
		parts = append(parts, fmt.Sprintf("%s %d", inv, r.Violations[inv]))
	}
	return strings.Join(parts, ", ")
}

// agreement says whether the two checkers agreed.
func agreement(r scenario.Result) string {
	switch {
	case r.Linearize == "":
		return "-"
	case r.Agree:
		return "agree"
	}
	return "DISAGREE"
}

// Summary is one line: how many scenarios passed, failed, were skipped.
func Summary(results []scenario.Result) string {
	n := map[scenario.Verdict]int{}
	for _, r := range results {
		n[r.Verdict]++
	}
	var parts []string
	for _, v := range []scenario.Verdict{scenario.Pass, scenario.Fail, scenario.Error, scenario.Skip} {
		if n[v] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[v], strings.ToLower(string(v))))
		}
	}
	verdict := "every scenario showed its expected outcome"
	if n[scenario.Fail]+n[scenario.Error] > 0 {
		verdict = "SOME SCENARIOS DID NOT SHOW THEIR EXPECTED OUTCOME"
	}
	return fmt.Sprintf("%d scenarios: %s. %s.", len(results), strings.Join(parts, ", "), verdict)
}

// JSON writes results as one indented JSON document.
func JSON(w io.Writer, results []scenario.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Results []scenario.Result `json:"results"`
		Summary string            `json:"summary"`
	}{results, Summary(results)})
}
