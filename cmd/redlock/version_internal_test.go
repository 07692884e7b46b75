package main

import (
	"runtime/debug"
	"testing"

	"github.com/quorumlock/quorumlock"
)

// redlock's version is the quorumlock module's in the build, wherever it
// sits in the build information.
func TestVersionReport(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		want versionReport
	}{
		{"no build information", nil, versionReport{Command: "(devel)"}},
		{"go install at a version", &debug.BuildInfo{Main: debug.Module{Path: quorumlock.Path, Version: "v0.1.0"}},
			versionReport{Command: "v0.1.0"}},
		{"a build in a checkout", &debug.BuildInfo{
			Main:     debug.Module{Path: quorumlock.Path, Version: "(devel)"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}},
		}, versionReport{Command: "(devel)", Revision: "abc123", Modified: true}},
		{"a dependency of another module", &debug.BuildInfo{
			Main: debug.Module{Path: "example.com/ops"},
			Deps: []*debug.Module{{Path: "example.com/other", Version: "v9.9.9"}, {Path: quorumlock.Path, Version: "v0.2.0"}},
		}, versionReport{Command: "v0.2.0"}},
		{"a dependency replaced by a directory", &debug.BuildInfo{
			Main: debug.Module{Path: "example.com/ops"},
			Deps: []*debug.Module{{Path: quorumlock.Path, Version: "v0.2.0", Replace: &debug.Module{Path: "../quorumlock"}}},
		}, versionReport{Command: "(devel)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := newVersionReport(tc.bi)
			tc.want.Module, tc.want.Core, tc.want.Go = quorumlock.Path, quorumlock.Version(), got.Go
			if got != tc.want || got.Go == "" {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
