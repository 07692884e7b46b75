// Command redlock is flock(1) across N independent Redis masters, a doctor
// for the conditions Redlock's safety rests on, and a way to see and clear
// locks at 3 a.m.
//
// Install it with
//
//	go install github.com/quorumlock/quorumlock/cmd/redlock@latest
//
// Usage:
//
//	redlock run [flags] KEY -- COMMAND [ARG...]
//	redlock doctor [flags]
//	redlock inspect [flags] KEY
//	redlock unlock [flags] KEY (--token TOKEN | --force)
//
// Masters come from --nodes or, when it is absent, the environment
// variable REDLOCK_NODES: a comma-separated list of host:port, or
// redis://[user:password@]host[:port][/db] (port 6379 by default), or the
// same with rediss:// for TLS. Every subcommand takes --nodes,
// --node-timeout, --json and -h (usage with an example); flags may come
// before or after KEY.
//
// A cron job that runs on several hosts but must run once at a time, and
// is skipped (status 0, no mail) while another run holds the lock:
//
//	REDLOCK_NODES=r1:6379,r2:6379,r3:6379
//	*/5 * * * * redlock run -n -E 0 report -- /opt/report.sh
//
// # run
//
// run takes KEY on a quorum of the masters, waiting for it (-w/--timeout
// DURATION to give up, -n/--nonblock for one attempt; DURATION is Go's
// "500ms", "1m" or flock's seconds "10"), runs COMMAND in a process group
// of its own with REDLOCK_KEY, REDLOCK_TOKEN and, with --fence,
// REDLOCK_FENCE (the fencing token) in its environment, renews the lock
// every third of --ttl (default 30s), and releases it on every master once
// COMMAND's job has ended, whatever COMMAND's status. SIGINT, SIGTERM,
// SIGHUP and SIGQUIT are forwarded to COMMAND's process group; while
// waiting for the lock they end the wait and COMMAND never runs.
//
// # The job never outlives the lock
//
// COMMAND's job is COMMAND and every process it starts. run starts it
// under a guardian, a second redlock process between run and COMMAND (its
// own binary, re-executed in a hidden mode; it shows as "redlock
// __guardian" in ps). The guardian knows the lock's validity (Until, sent
// at the start and after every renewal) and:
//
//   - stops the job (SIGTERM to every process of it, then SIGKILL after
//     --kill-after, default 10s) when the lock is lost (a renewal finds the
//     token gone from a quorum), and when run dies (SIGKILL, the OOM
//     killer, systemctl stop with KillMode=process): it holds a pipe from
//     run and learns of its death when the pipe ends;
//   - has the job dead a margin (TTL/10, at most 500ms) before the lock's
//     validity could end without a renewal: SIGKILL then at the latest,
//     whatever --kill-after says; when no renewal got through for a while
//     (the masters do not answer, run hangs or is stopped), SIGTERM comes
//     min(--kill-after, TTL/3) before that margin (run then exits 75);
//   - stops what COMMAND left running when it ends (background processes,
//     a worker whose shell exited on SIGTERM) the same way: run exits with
//     COMMAND's status, but only once none of them is left, and releases
//     the lock only then. A job that wants its background work to finish
//     must wait for it.
//
// On Linux the guardian is a subreaper (PR_SET_CHILD_SUBREAPER): every
// process of the job whose parent dies becomes the guardian's child, those
// that left the process group (setsid, a daemon that forks twice)
// included, so it finds them all (the group, and its descendants in /proc),
// kills them and waits until none is left. COMMAND gets SIGKILL when the
// guardian dies (PR_SET_PDEATHSIG); run, a subreaper too, then inherits
// the rest of the job, kills it, releases the lock and exits 70.
//
// Not covered:
//
//   - run and the guardian both killed (kill -9 of both): COMMAND itself
//     gets SIGKILL, the rest of the job runs on. (A kill of the whole
//     cgroup, as systemd's default KillMode=control-group does, takes the
//     job with it.)
//   - The guardian stopped (SIGSTOP) or frozen while the job runs.
//   - Processes the job did not start as descendants: work handed to
//     another service (at, systemd-run, ssh, a container runtime), which
//     no process tree can follow.
//   - Processes redlock may not signal (another user's, after sudo): while
//     run lives they are waited for, the lock renewed; once it is gone
//     they run on.
//   - A process in uninterruptible sleep (D state) gets its SIGKILL in time
//     but dies only when its I/O returns.
//   - Elsewhere than Linux (no subreaper, no parent-death signal, no
//     /proc), the job is its process group: a process that leaves it
//     (setsid, setpgid) is neither stopped nor waited for, and if the
//     guardian dies, run kills the group only.
//
// # Exit statuses
//
//	run:      COMMAND's own status when it ended with the lock held
//	          throughout (128+N when signal N ended it)
//	          -E/--conflict-exit-code (default 1): not acquired; COMMAND did not run
//	          75: the lock was lost, or no renewal got through in time, while
//	          COMMAND ran, and its job was stopped
//	          70: the guardian died; every process of the job was killed
//	          126, 127: COMMAND could not be run / was not found
//	          128+N: signal N arrived while waiting for the lock
//	doctor:   0 every master answers and meets every condition; 1 one does not
//	inspect:  0
//	unlock:   0 something was removed on at least one master; 1 nothing was
//	all:      64 bad usage, a bad flag, a missing or malformed node list
//	          69 fewer than a quorum of the masters answer
//	          70 an unexpected internal failure
//
// 75 (EX_TEMPFAIL) lets a scheduler tell "lost the lock, run it again" from
// "the job failed"; -E may not be set to it. Errors are one line on stderr
// starting "redlock: ". A refused lock prints nothing, as flock(1) does.
//
// # doctor
//
// doctor asks every master for its round trip, version, appendonly and
// appendfsync, maxmemory-policy, replication role and replicas (INFO
// replication) and server clock (TIME), and names each broken condition:
// "persistence" (AOF off, or appendfsync not always), "eviction" (a policy
// other than noeviction: lock keys all have a TTL), "replication" (a
// replica, or a master with replicas), "clock" (skew beyond the drift
// allowance ttl*drift-factor + 2ms, from --ttl and --drift-factor), and
// "unreachable". A setting that cannot be read (CONFIG renamed) is
// reported as "unknown", from INFO where INFO tells it; unknowns do not
// fail the check.
//
// # inspect and unlock
//
// inspect reads, on every master, KEY (a plain or fenced lock's token, or a
// reentrant lock's hash of owner -> hold count), {KEY}:w, {KEY}:r and
// {KEY}:wq (a read-write lock's writer, readers by expiry and waiting
// writer) and {KEY}:fence (the fencing counter), with remaining TTLs, and
// says which holders a quorum agrees on. (A KEY with a hash tag of its own,
// such as "{orders}:x", is the prefix as it is: "{orders}:x:w".)
//
// unlock --token TOKEN removes TOKEN's hold on every master with a
// compare-and-delete: a plain or fenced lock, a reentrant owner (all its
// holds), a writer or a reader. unlock --force deletes KEY, {KEY}:w,
// {KEY}:r and {KEY}:wq whoever holds them, never {KEY}:fence, so fencing
// tokens keep growing. Both announce the release to waiting clients.
//
// # JSON
//
// With --json, doctor, inspect and unlock print one JSON object on stdout,
// and run prints one on stderr when it ends (stdout is COMMAND's). Errors
// before that stay one line of text on stderr. Fields are only ever added.
//
// run:
//
//	{"key": "report", "acquired": true, "token": "…", "fence": 7,
//	 "outcome": "done|conflict|lost|interrupted|error",
//	 "command_status": 0,   // null when COMMAND did not run or end normally
//	 "exit_code": 0, "error": "…"}
//
// doctor:
//
//	{"quorum": 2, "answering": 3, "drift_allowance_ms": 302, "ok": false,
//	 "masters": [{"addr": "r1:6379", "answers": true, "error": "…",
//	   "round_trip_ms": 0.3, "version": "7.2.4", "role": "master",
//	   "connected_replicas": 0, "appendonly": "yes", "appendfsync": "always",
//	   "maxmemory_policy": "noeviction", "clock_skew_ms": -0.1,
//	   "problems": [{"check": "persistence", "detail": "…"}],
//	   "unknown": [{"check": "…", "detail": "…"}]}]}
//
// Unreadable settings are "unknown", and connected_replicas is -1.
//
// inspect:
//
//	{"key": "report", "quorum": 2, "held": true,
//	 "masters": [{"addr": "r1:6379", "error": "…", "type": "string",
//	   "lock": {"token": "…", "ttl_ms": 29000},
//	   "reentrant": {"owners": {"job-7": 2}, "ttl_ms": 29000},
//	   "writer": {"token": "…", "ttl_ms": 29000},
//	   "readers": [{"token": "…", "ttl_ms": 29000}],
//	   "waiting_writer": {"token": "<writer id>", "ttl_ms": 29000},
//	   "fence": 7}],
//	 "holders": [{"kind": "lock|reentrant|writer|reader", "token": "…",
//	   "masters": ["r1:6379", "r2:6379"], "quorum": true}]}
//
// lock, reentrant, writer and waiting_writer are absent when there is none,
// fence is null without a counter, and ttl_ms is -1 for a key without
// expiry. held is true when a holder other than a reader is on a quorum.
//
// unlock:
//
//	{"key": "report", "force": false, "removed_on": 3, "quorum": 2,
//	 "masters": [{"addr": "r1:6379", "removed": ["lock"], "error": "…"}]}
//
// removed lists, with --token, the kinds of hold removed ("lock",
// "reentrant", "writer", "reader") and, with --force, the keys deleted.
package main
