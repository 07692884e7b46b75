package redlock

import (
	"embed"
	"io/fs"
	"path"
	"strings"

	"github.com/quorumlock/quorumlock/redlock/internal/recorded"
)

// The script catalogue: every Lua script the lock kinds run, embedded at
// build time. Their SHA1 digests (for EVALSHA) are computed at build time
// too (digests.go, made by go generate and checked by a test), so that
// nothing hashes with SHA-1 when the program starts: under
// GODEBUG=fips140=only, crypto/sha1 refuses to run.
//
// The conventions every lock kind's acquire, extend and release scripts
// share (see variant.go): KEYS[1] is the tombstone of the call's identity
// (its token, or hold id), then the kind's own keys; an acquire's ARGV is
// the token, the TTL in ms and the kind's own arguments; an extend's the
// token and the TTL; a release's the token, the release channel ('' to
// announce nothing), the tombstone's lifetime in ms and the kind's own.

//go:embed scripts/*.lua
var scriptFiles embed.FS

//go:generate go run ./internal/digests

var (
	acquireScript          = loadScript("acquire")
	releaseScript          = loadScript("release")
	extendScript           = loadScript("extend")
	checkScript            = loadScript("check")
	fenceAcquireScript     = loadScript("fence_acquire")
	fenceRaiseScript       = loadScript("fence_raise")
	reentrantAcquireScript = loadScript("reentrant_acquire")
	reentrantExtendScript  = loadScript("reentrant_extend")
	reentrantCheckScript   = loadScript("reentrant_check")
	reentrantReleaseScript = loadScript("reentrant_release")
	readAcquireScript      = loadScript("read_acquire")
	readExtendScript       = loadScript("read_extend")
	readCheckScript        = loadScript("read_check")
	readReleaseScript      = loadScript("read_release")
	writeAcquireScript     = loadScript("write_acquire")
	writeReleaseScript     = loadScript("write_release")
	writeWithdrawScript    = loadScript("write_withdraw")
	fairDrawScript         = loadScript("fair_draw")
	fairAcquireScript      = loadScript("fair_acquire")
	fairRefreshScript      = loadScript("fair_refresh")
	fairLeaveScript        = loadScript("fair_leave")
	fairReleaseScript      = loadScript("fair_release")
	multiAcquireScript     = loadScript("multi_acquire")
	multiExtendScript      = loadScript("multi_extend")
	multiCheckScript       = loadScript("multi_check")
	multiReleaseScript     = loadScript("multi_release")
	resumeFencedScript     = loadScript("resume_fenced")
	guardReadScript        = loadScript("guard_read")
	guardWriteScript       = loadScript("guard_write")
	extendRecordScript     = loadScript("extend_record")
	recordWriteScript      = loadScript("record_write")
	holderReadScript       = loadScript("holder_read")
)

// script is a Lua script with its SHA1 digest, for EVALSHA.
type script struct {
	name, src, hash string
	hashArg         any // hash as an argument, boxed once
}

func loadScript(name string) script {
	src, err := scriptFiles.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		panic(err) // embedded at build time: cannot happen
	}
	return newScript(name, string(src))
}

// newScript is the script src named name, with its digest from
// scriptDigests.
func newScript(name, src string) script {
	hash, ok := scriptDigests[name]
	if !ok {
		panic("redlock: script " + name + " has no digest: run go generate ./redlock")
	}
	return script{name: name, src: src, hash: hash, hashArg: hash}
}

// recordedScripts are the scripts, each in every mode of a lock with a
// holder record (internal/recorded), by recorded.Name.
var recordedScripts = loadRecorded()

func loadRecorded() map[string]script {
	files, err := fs.Glob(scriptFiles, "scripts/*.lua")
	if err != nil {
		panic(err) // a valid pattern: cannot happen
	}
	scripts := make(map[string]script, len(files)*len(recorded.Modes))
	for _, f := range files {
		name := strings.TrimSuffix(path.Base(f), ".lua")
		src := loadScript(name).src
		for _, m := range recorded.Modes {
			n := recorded.Name(name, m)
			scripts[n] = newScript(n, recorded.Wrap(src, m))
		}
	}
	return scripts
}

// inMode is s run in mode m for a lock with a holder record.
func inMode(s script, m recorded.Mode) script { return recordedScripts[recorded.Name(s.name, m)] }
