package mutation

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Defect is one deliberate bug.
type Defect struct {
	// Name identifies the defect, e.g. "release-ignores-token".
	Name string
	// Description says what the defect breaks.
	Description string
	// Edits make the defect; all are applied together.
	Edits []Edit
	// Scenarios are the short scenarios expected to catch it; only these
	// run, unless the runner is asked for all of them.
	Scenarios []string
	// Runs is how many times its scenarios run (go test -count), at most:
	// the first failure ends them. 0 means once. A defect whose path opens
	// by chance, not by a probe, needs a few; the report lists it as caught
	// by chance (work left), and --rate measures how often it is.
	Runs int
	// Chance, when set, says that the suite catches the defect only by
	// chance, with the catch rate measured (--rate): such a defect is work
	// left. The report lists it with its rate and this run's outcome, and
	// its miss does not fail the self-test (Report.OK).
	Chance string
	// Note says how its scenarios catch the defect (the probe or the
	// workload that opens its path); the report prints it when the defect
	// was missed.
	Note string
}

// Edit replaces one exact anchor text in one file.
type Edit struct {
	// File is the path from the repository's root, with slashes.
	File string
	// Anchor is the exact text to replace; it must occur exactly once.
	Anchor string
	// Replace is the text that replaces it.
	Replace string
}

// ErrAnchor is the error of an edit whose anchor does not occur exactly
// once in its file.
var ErrAnchor = errors.New("mutation: anchor not found exactly once")

// Check reports, for each edit of d, whether its anchor occurs exactly once
// in its file under root.
func (d Defect) Check(root string) error {
	var errs []error
	for _, e := range d.Edits {
		if _, err := e.find(root); err != nil {
			errs = append(errs, fmt.Errorf("defect %s: %w", d.Name, err))
		}
	}
	return errors.Join(errs...)
}

// find returns the content of e's file, checking that the anchor occurs in
// it exactly once.
func (e Edit) find(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.File)))
	if err != nil {
		return "", fmt.Errorf("mutation: %w", err)
	}
	if n := strings.Count(string(b), e.Anchor); n != 1 {
		return "", fmt.Errorf("%w: %s: %d times: %q", ErrAnchor, e.File, n, e.Anchor)
	}
	return string(b), nil
}

// Apply makes d's edits in the tree under root and returns a function that
// restores every file it changed. If an anchor is missing it changes
// nothing and returns an error matching ErrAnchor.
func (d Defect) Apply(root string) (restore func() error, err error) {
	type change struct{ path, before, after string }
	changes := map[string]*change{} // by file: several edits may share one
	var order []*change
	for _, e := range d.Edits {
		c := changes[e.File]
		if c == nil {
			before, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(e.File)))
			if err != nil {
				return nil, fmt.Errorf("mutation: defect %s: %w", d.Name, err)
			}
			c = &change{path: filepath.Join(root, filepath.FromSlash(e.File)), before: string(before), after: string(before)}
			changes[e.File] = c
			order = append(order, c)
		}
		if n := strings.Count(c.after, e.Anchor); n != 1 {
			return nil, fmt.Errorf("defect %s: %w: %s: %d times: %q", d.Name, ErrAnchor, e.File, n, e.Anchor)
		}
		c.after = strings.Replace(c.after, e.Anchor, e.Replace, 1)
	}
	restore = func() error {
		var errs []error
		for _, c := range order {
			errs = append(errs, writeKeepMode(c.path, c.before))
		}
		return errors.Join(errs...)
	}
	for _, c := range order {
		if err := writeKeepMode(c.path, c.after); err != nil {
			return nil, errors.Join(fmt.Errorf("mutation: defect %s: %w", d.Name, err), restore())
		}
	}
	for _, c := range order {
		if strings.HasPrefix(filepath.ToSlash(c.path), filepath.ToSlash(filepath.Join(root, "redlock", "scripts"))+"/") {
			// The library computes no digest when it starts (redlock's
			// digests.go, made at build time): an edited script needs its
			// own, or every call of it would be answered NOSCRIPT first.
			path := filepath.Join(root, "redlock", "digests.go")
			before, err := os.ReadFile(path)
			if err != nil {
				return nil, errors.Join(fmt.Errorf("mutation: defect %s: %w", d.Name, err), restore())
			}
			order = append(order, &change{path: path, before: string(before)})
			if err := writeDigests(filepath.Join(root, "redlock")); err != nil {
				return nil, errors.Join(fmt.Errorf("mutation: defect %s: %w", d.Name, err), restore())
			}
			break
		}
	}
	return restore, nil
}

// writeDigests writes dir/digests.go for the scripts in dir/scripts (and
// each in the modes of a lock with a holder record) with redlock's own
// generator, as its go generate does.
func writeDigests(dir string) error {
	cmd := exec.Command("go", "run", "./internal/digests")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go run ./internal/digests: %w: %s", err, out)
	}
	return nil
}

// writeKeepMode rewrites the file at path with content, keeping its mode.
func writeKeepMode(path, content string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), st.Mode().Perm())
}
