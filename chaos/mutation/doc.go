// Package mutation is the chaos suite's self-test: it applies deliberate
// defects to a temporary copy of the repository, one at a time, runs the
// short scenarios expected to catch each, and reports which defects a
// scenario caught.
//
// A Defect is data: a name, what it breaks, and one or more Edits, each an
// exact anchor text in one file and its replacement. An anchor must occur
// exactly once in its file; the library changes, so a defect whose anchor
// went stale fails loudly (ErrAnchor) rather than testing nothing.
//
// The copy holds what `git ls-files --cached --others --exclude-standard`
// lists in the repository's root, so the working tree's uncommitted changes
// are tested too. The chaos module of the copy uses `replace ../`: the
// scenarios run against the copy's, mutated, library. Go's build cache is
// shared with the caller, so only the mutated packages are rebuilt.
//
// Run it with `go run ./cmd/mutate` from chaos/, or chaos/mutation/run.sh.
package mutation
