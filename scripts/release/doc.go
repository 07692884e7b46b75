// Command release keeps the repository's modules installable: their
// versions in one place (the versions file at the repository's root), the
// go.mod files that agree with it, and a module proxy built from the tree
// at those versions, through which a module outside the repository
// resolves and builds them (scripts/release-check.sh).
//
// Usage, from the repository's root (go.work includes this module; with
// GOWORK=off, run "go run . ..." in scripts/release):
//
//	go run ./scripts/release proxy DIR   # write a file-based module proxy (GOPROXY=file://DIR)
//	go run ./scripts/release sync        # make every go.mod require the repository's modules at their versions
//
// proxy writes, for each module, DIR/<module path>/@v/ with list,
// <version>.info, <version>.mod and <version>.zip, the zip made by
// golang.org/x/mod/zip from the files git tracks or does not ignore in the
// module's directory, without those of nested modules.
//
// It is a module of its own, so that golang.org/x/mod stays out of the
// library's dependencies. Its tests check the versions file against every
// go.mod, the LICENSE copies and the CHANGELOG, and that the proxy it
// builds holds valid module zips.
package main
