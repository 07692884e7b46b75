package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/quorumlock/quorumlock/chaos/checker"
	"github.com/quorumlock/quorumlock/chaos/cluster"
	"github.com/quorumlock/quorumlock/chaos/scenario"
	"github.com/quorumlock/quorumlock/chaos/workload"
)

// Suite describes the run of the suite as a whole, for the report's
// header: what kind of evidence the verdicts are, and where the files
// written beside the report are.
type Suite struct {
	// Short marks the short form (--short): a smoke test, which the report
	// says, pointing to a soak for evidence.
	Short bool
	// Duration is the length of the random workloads.
	Duration time.Duration
	// SVGs and Dumps map a scenario to its timeline file and to the file
	// of its goroutine dump (a hang or a panic), if written.
	SVGs, Dumps map[string]string
}

// SoakCommand is the command the report points to for evidence.
const SoakCommand = "go run ./cmd/chaos --soak 30m"

// Mode names the kind of run: "short (smoke test)" or "full", and what a
// PASS of it shows.
func (s Suite) Mode() (mode, note string) {
	if s.Short {
		return "short (smoke test)", fmt.Sprintf("--short runs each random workload for %v only: a PASS shows that this run met no defect, "+
			"not that there is none; for evidence run a soak: %s", s.Duration, SoakCommand)
	}
	return "full", fmt.Sprintf("random workloads of %v; a soak (%s) gives stronger evidence", s.Duration, SoakCommand)
}

// Text writes the report of results: the kind of run, a summary table,
// then each scenario's invariant, expectation, checks, notes and how to
// replay it.
func Text(w io.Writer, suite Suite, results []scenario.Result) error {
	mode, note := suite.Mode()
	fmt.Fprintf(w, "mode: %s: %s\n\n", mode, note)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "SCENARIO\tKIND\tBACKEND\tEXPECTED\tVERDICT\tACQUIRED\tFAULTS\tOVERLAPS\tVIOLATIONS\tSTALE REJECTED\tCHECKERS\tTIME\tSEED\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%v\t%d\t\n", r.Scenario, r.Kind, r.Backend, r.Expected, r.Verdict,
			r.Acquisitions, r.Faults, r.Overlaps, others(r), r.StaleRejected, agreement(r), r.Elapsed.Round(100*time.Millisecond), r.Seed)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(w, "\n== %s [%s] on %s, seed %d\n", r.Scenario, r.Verdict, r.Backend, r.Seed)
		if r.Server != "" {
			fmt.Fprintf(w, "   server:    %s\n", r.Server)
		}
		fmt.Fprintf(w, "   invariant: %s\n", r.Invariant)
		fmt.Fprintf(w, "   expected:  %s: %s\n", r.Expected, r.Expect)
		fmt.Fprintf(w, "   observed:  %s\n", r.Outcome)
		fmt.Fprintf(w, "   counts:    %d attempts, %d acquisitions, %d faults, %d overlaps, %d writes (%d late, %d stale rejected)\n",
			r.Attempts, r.Acquisitions, r.Faults, r.Overlaps, r.Writes, r.LateWrites, r.StaleRejected)
		if len(r.Transports) > 0 {
			fmt.Fprintf(w, "   clients:   %s\n", transports(r))
		}
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
		if r.Aborted != "" {
			dump(w, r, suite.Dumps[r.Scenario])
		}
		if p := suite.SVGs[r.Scenario]; p != "" {
			fmt.Fprintf(w, "   timeline:  %s\n", p)
		}
		server := ""
		if r.Server != "" && r.Server != cluster.DefaultServer {
			server = " --server " + r.Server
		}
		fmt.Fprintf(w, "   replay:    go run ./cmd/chaos --backend %s%s --scenario %s --seed %d\n", r.Backend, server, r.Scenario, r.Seed)
	}
	if err := drivenTable(w, results); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%s\n", Summary(results))
	if totals := TransportTotals(results); len(totals) > 0 {
		parts := make([]string, len(totals))
		for i, u := range totals {
			parts[i] = fmt.Sprintf("%s %d", u.Transport, u.Acquired)
		}
		fmt.Fprintf(w, "Locks acquired per transport over the suite: %s.\n", strings.Join(parts, ", "))
	}
	if suite.Short {
		fmt.Fprintf(w, "This was a smoke test (--short); for evidence run a soak: %s\n", SoakCommand)
	}
	return nil
}

// TransportTotals sums, per transport of workload.Transports that some
// scenario's clients used, the locks its clients acquired over results.
// Clients counts the scenarios' clients that used it.
func TransportTotals(results []scenario.Result) []Total {
	var out []Total
	for _, t := range workload.Transports {
		tot := Total{Transport: t}
		for _, r := range results {
			for _, u := range r.Transports {
				if u.Transport == t {
					tot.Clients += len(u.Clients)
					tot.Acquired += u.Acquired
				}
			}
		}
		if tot.Clients > 0 {
			out = append(out, tot)
		}
	}
	return out
}

// Total is what the clients of one transport did over a suite.
type Total struct {
	Transport workload.Transport `json:"transport"`
	// Clients counts the clients (of all scenarios) that used it.
	Clients int `json:"clients"`
	// Acquired counts the locks they acquired.
	Acquired int `json:"acquired"`
}

// transports describes which clients used which transport, and what they
// acquired.
func transports(r scenario.Result) string {
	parts := make([]string, len(r.Transports))
	for i, u := range r.Transports {
		parts[i] = fmt.Sprintf("%s %v: %d acquired", u.Transport, u.Clients, u.Acquired)
	}
	return strings.Join(parts, "; ")
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

// byInvariant lists r's violations per invariant, in report order, then
// those of the invariants the scenario checked itself (the election's),
// in name order.
func byInvariant(r scenario.Result) string {
	var parts []string
	for _, inv := range checker.Invariants {
		parts = append(parts, fmt.Sprintf("%s %d", inv, r.Violations[inv]))
	}
	var extra []checker.Invariant
	for inv := range r.Violations {
		if !slices.Contains(checker.Invariants, inv) {
			extra = append(extra, inv)
		}
	}
	slices.Sort(extra)
	for _, inv := range extra {
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

// JSON writes results as one indented JSON document, with the kind of run
// and what a PASS of it shows.
func JSON(w io.Writer, suite Suite, results []scenario.Result) error {
	mode, note := suite.Mode()
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Mode       string            `json:"mode"`
		Note       string            `json:"note"`
		Duration   time.Duration     `json:"duration_ns"`
		Results    []scenario.Result `json:"results"`
		Summary    string            `json:"summary"`
		Transports []Total           `json:"transports"`
		Driven     []Cell            `json:"driven"`
	}{mode, note, suite.Duration, results, Summary(results), TransportTotals(results), Driven(results)})
}
