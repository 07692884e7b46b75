// Command redlock is flock(1) across N independent Redis masters, leader
// election over them, a doctor for the conditions Redlock's safety rests
// on, and a way to see and clear locks at 3 a.m.
//
// Install it with
//
//	go install github.com/quorumlock/quorumlock/cmd/redlock@latest
//
// Usage:
//
//	redlock run [flags] KEY -- COMMAND [ARG...]
//	redlock doctor [flags]
//	redlock inspect [flags] KEY [KEY...]
//	redlock unlock [flags] KEY (--token TOKEN | --force)
//	redlock elect [flags] NAME VALUE
//	redlock elect --listen [flags] NAME
//
// Masters come from --nodes or, when it is absent, the environment
// variable REDLOCK_NODES: a comma-separated list of host:port, or
// redis://[user:password@]host[:port][/db] (port 6379 by default), or the
// same with rediss:// for TLS. Every subcommand takes --nodes,
// --node-timeout, --json and -h (usage with an example); flags may come
// before or after KEY.
//
// run, inspect, unlock and elect take --prefix PREFIX (default: the environment
// variable REDLOCK_PREFIX; --prefix= sets none): PREFIX goes in front of
// every key on the masters, as redlock.Config.KeyPrefix does, so that lock
// keys cannot collide with an application's data ("locks:" makes the lock
// "report" the key "locks:report"). Every client of a lock must use the
// same prefix.
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
// Before it exits, run waits for every release it sent to be answered
// (redlock.Locker.Close): the lock's deletes on the masters that had not
// answered when the release reached a quorum, and the release of a
// refused attempt's grants on the masters that granted it. It waits up to
// 2s or twice --node-timeout, whichever is longer, and never longer than
// --ttl; a master that has not answered by then (down, or too slow) keeps
// the key until it expires there.
//
// run takes the lock with a holder record (redlock.WithMetadata): the
// hash "{KEY}:holder" (redlock/layout.Holder) beside the lock key, with the
// lock's token and the fields host, pid (run's), command (COMMAND's name),
// started (when the lock was acquired, RFC 3339; until COMMAND starts,
// when run began to wait for it), note (--note TEXT, when given) and,
// once COMMAND runs, command_pid. The library writes it with the lock,
// only on the masters that grant it, extends it with every renewal and
// deletes it with the lock, so it never outlives the lock on a master;
// run adds command_pid with Lock.SetMetadata. inspect prints it beside the
// holder whose token it carries.
//
// After every renewal run counts the masters that hold the lock (the
// library's renewal returns at a quorum, so it cannot tell): it reads the
// lock key on each. When fewer
// than all do, the lock rests on a bare quorum, or close to it, and run
// warns on stderr, once per change of that number:
//
//	redlock: warning: the renewal of "report" reached only 2 of 3 masters (quorum 2; one more failed master loses it): r3:6379: does not hold the lock
//
// and once all masters hold it again:
//
//	redlock: the renewals of "report" reach all 3 masters again
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
//	elect:    0 a signal ended it (a leader resigned first)
//	          75: the leadership was lost
//	          128+N: signal N arrived while waiting to lead
//	doctor:   0 every master answers and meets every condition; 1 one does not
//	inspect:  0 (also when nothing holds KEY, or KEY is not a lock)
//	unlock:   0 something was removed on at least one master; 1 nothing was;
//	          65 a key was left alone because it is not a lock (whatever
//	          else was removed)
//	all:      64 bad usage, a bad flag, a missing or malformed node list;
//	          for run and elect also masters the library refuses to use: the
//	          client's user may not run INFO on more of them than the set
//	          tolerates, so the restart guard cannot read their processes
//	          (see doctor; run says so at once instead of waiting)
//	          69 fewer than a quorum of the masters answer (for run: or can
//	          grant: masters that restarted are held back by the restart
//	          guard until they have been up for the longest TTL recorded,
//	          see doctor)
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
// allowance ttl*drift-factor + 2ms, from --ttl and --drift-factor),
// "identity" (the client cannot read the master's process: see below) and
// "unreachable". A setting that cannot be read (CONFIG renamed) is
// reported as "unknown", from INFO where INFO tells it; unknowns do not
// fail the check.
//
// It says what each master's clients can enforce, through this command's
// own client (pool.Node, the one run uses):
//
//   - identity: whether the master's process (run id, uptime, persistence)
//     can be read, as pool.Node reads it on every new connection (INFO
//     server and persistence, CONFIG GET appendfsync). The restart guard
//     needs it: a master whose INFO is refused (an ACL without +info, or
//     INFO renamed) has every grant refused by the library (ErrInvalid; run
//     exits 64), a broken "identity" condition that names the ACL
//     permission the user lacks. A refused CONFIG GET (+config|get) is
//     named too: the library then counts the master as not persisting
//     every write, so its restarts are always guarded.
//   - the restart guard's record (see inspect) under --prefix (default:
//     REDLOCK_PREFIX), and the verdict every client reaches on it:
//     "registered" (it names the running process), "kept every write"
//     (restarted, with appendfsync always before and since), "held back"
//     (restarted, or without a record while others have one: its grants do
//     not count until it has been up for the longest TTL recorded, and
//     doctor says for how much longer), "up long enough" (restarted long
//     enough ago: the next client registers it), or "fresh deployment" (no
//     master has a record). Held back is no broken condition: it passes.
//   - one line of what the library enforces there: the restart guard
//     ("applies", or "cannot apply" without the identity), durable
//     confirmations (Config.Durability{Local}: "yes", or "no" and why: AOF
//     off, appendfsync no, no WAITAOF before Redis 7.2) and replica
//     confirmations (WAIT, up to its replicas).
//
// It names each master's server (INFO server: Redis, or Valkey by its
// server_name, with its own version), whether it has WAITAOF (COMMAND
// INFO; by the version when COMMAND is refused: Redis 7.2 and later, every
// Valkey), and the guarantee it gives the locks it grants:
//
//   - "durable by configuration": AOF with appendfsync always; every grant
//     is on disk before it is acknowledged.
//   - "durable by WAITAOF": AOF on with appendfsync everysec, and WAITAOF:
//     a grant is durable once WAITAOF confirms it, which the library's
//     durable grants wait for.
//   - "restart guard only": no durable persistence (AOF off, appendfsync
//     no, whose AOF the server never fsyncs, so that WAITAOF confirms
//     nothing, or everysec without WAITAOF): after a restart the master
//     forgot what it granted,
//     and is safe only while it grants nothing until those locks expired
//     (the client's restart guard, or a restart delayed by the longest
//     TTL).
//   - "none": it may lose a held lock anyway: an eviction policy other
//     than noeviction, a replica, or a master with replicas that a failover
//     would promote.
//   - "unknown": it does not answer, or a setting that decides could not be
//     read.
//
// Last, it says how many failed masters the set tolerates and still grants
// locks (N - quorum) and how many more may fail now (answering - quorum),
// and how many masters have a restart-guard record, the longest TTL
// recorded, and how many are held back now.
//
// # inspect and unlock
//
// inspect reads, on every master and in one atomic script, every key the
// lock kinds keep for KEY (redlock/layout names them): KEY itself (a plain,
// fenced, fair or multi-key lock's token, or a reentrant lock's hash: its
// owner and one field per hold), {KEY}:w, {KEY}:r and {KEY}:wq (a
// read-write lock's writer, readers by expiry and waiting writer),
// {KEY}:fair:* (a fair lock's waiters, in the order the master serves them,
// with what is left of their registrations), {KEY}:permit:<i> (a
// semaphore's held permits, each with its holder record
// {KEY}:permit:<i>:holder), {KEY}:fence (the fencing counter) and
// {KEY}:holder (the holder record of a lock, a reentrant owner or a
// writer), with remaining TTLs, and says which
// holders a quorum agrees on. (A KEY with a hash tag of its own, such as
// "{orders}:x", is the prefix as it is: "{orders}:x:w".) A semaphore's
// permits are those --permits K names (0 to K-1) or, without it, those a
// SCAN finds (MATCH "{KEY}:permit:*", COUNT 1000); a master with more than
// 100000 keys is not SCANned, and inspect says so. Several KEYs give one
// report each, and a token that holds several of them on a quorum (the
// keys of one multi-key lock) is said to.
//
// A lock taken with a holder record (redlock.WithMetadata: by run, by
// elect, by any library user) has it printed under its holder: run's
// fields in words, every other field as field=value (a value with spaces,
// quotes, commas or "=" quoted as Go quotes it):
//
//	lock 5J3VQ2KXW7… on 3 of 3 masters (quorum)
//	  held by pid 4242 on host web-3, command report.sh (pid 4250), since 2026-01-02T03:04:05Z (1m0s ago)
//	lock QX6M4A… on 3 of 3 masters (quorum)
//	  metadata: owner="billing svc", request=r-17
//
// A record is trusted only where its token is the lock's on that master
// (else inspect calls it stale and ignores it).
//
// Beside the lock's state inspect shows each master's restart-guard
// record (redlock/layout.Registry: PREFIX{quorumlock}:guard, a hash that
// never expires): the run id a client registered for the master, the
// persistence recorded for that run ("always" or "other") and the longest
// TTL any client recorded; and whether that run is the master's running
// process. A client counts a master's grants only once its record names
// its running process; one whose record names an earlier run, or that has
// none while other masters have one, restarted, and clients hold it back
// until it has been up for the longest TTL recorded (doctor says for how
// long).
//
// A key is lock state only if it is what this library writes there: a
// TTL (every key a lock writes has one; a fencing counter of an older
// version may not), and a string holding one of the library's tokens
// (crypto/rand.Text(): exactly 26 characters of the base32 alphabet A-Z
// and 2-7; lock tokens, hold ids, writer and waiter ids are all made so),
// a reentrant hash (the field owner and fields h:<hold id> = 1, nothing
// else), a sorted set of tokens with integer scores, a counter, or a
// holder record (the field token holding a token, or a reentrant lock's
// owner, and any other fields up to redlock.MaxMetadataLen bytes of names
// and values), as the key's place
// calls for. Anything else under those names (an application's JSON
// document under KEY, a cached UUID, JWT or URL with a TTL, a user hash, a
// list, a set, a stream) is "not a lock": inspect names it and what it is, and
// counts no holder there. So is, by its name, the library's own memory:
// the restart guard's record (PREFIX{quorumlock}:guard), the durable
// confirmations' probe (PREFIX{quorumlock}:probe) and a fencing counter
// (a counter named ...:fence), whatever KEY names them. The same check
// (cmd/redlock/shape.lua) runs inside unlock's scripts, so it holds at the
// moment of the deletion.
//
// unlock --token TOKEN removes TOKEN's hold on every master with a
// compare-and-delete: a plain, fenced, fair or multi-key lock's KEY, a
// reentrant owner (all its holds), a writer, a reader or a semaphore
// permit. unlock --force deletes KEY, {KEY}:w, {KEY}:r, {KEY}:wq and the
// semaphore permits whoever holds them, never {KEY}:fence, so fencing
// tokens keep growing, nor a fair lock's queue, whose registrations expire
// on their own, nor the restart guard's record. Both delete the holder
// record with the lock (a permit's with the permit), leave alone what is not a lock (and exit 65), and
// announce the release to waiting clients. Scripts go as EVAL (their full
// text), so the command computes no SHA-1 and runs under
// GODEBUG=fips140=only.
//
// # elect
//
// elect is etcdctl elect over the masters (redlock.Election). With VALUE
// it campaigns in the election NAME: it waits while another candidate
// leads (waking when the leader resigns), and once elected prints the
// leader line
//
//	scheduler term=1764385696000001 value=web-3
//
// on stdout (NAME and VALUE quoted as Go quotes them when they hold
// spaces, quotes, commas or "="), then leads until SIGINT, SIGTERM or
// SIGHUP, resigns (the release wakes the next candidate) and exits 0. The
// leadership is a fenced lock on NAME, renewed every third of --ttl
// (default 30s), whose holder record carries the fields value and term
// (inspect NAME shows them). The term is the lock's fencing token: it
// grows with every new leader, so a resource that remembers the highest
// term it saw can turn a deposed leader away. When a renewal finds the
// leadership gone from a quorum (the masters lost it, unlock --force took
// it), elect says so on stderr and exits 75; a signal while waiting to
// lead exits 128+N.
//
// elect --listen NAME prints the leader line of the current leader, if
// any, then of every new term or proclaimed value, in term order and
// each once, until a signal ends it (exit 0). It reads the leader from a
// quorum when a master announces a release or a new record, and at least
// every quarter of --ttl (at most every second); a leader whose whole
// term falls between two reads is not seen.
//
// # JSON
//
// With --json, doctor, inspect and unlock print one JSON object on stdout,
// and run prints one on stderr when it ends (stdout is COMMAND's). elect
// prints each leader line as one JSON object on a line of its own on
// stdout, and a campaign one more object on stderr when it ends. Errors
// before that stay one line of text on stderr. Fields are only ever added.
//
// elect (each leader line, on stdout; one line each):
//
//	{"name": "scheduler", "term": 1764385696000001, "value": "web-3"}
//
// and, on stderr when a campaign ends:
//
//	{"name": "scheduler", "elected": true, "term": 1764385696000001,
//	 "value": "web-3", "outcome": "resigned|lost|interrupted|error",
//	 "exit_code": 0, "error": "…"}
//
// term is absent when the candidate was not elected.
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
//	{"quorum": 2, "answering": 3, "tolerates": 1, "more_may_fail": 1,
//	 "guarantees": {"durable by configuration": 3},
//	 "drift_allowance_ms": 302, "ok": false,
//	 "masters": [{"addr": "r1:6379", "answers": true, "error": "…",
//	   "round_trip_ms": 0.3, "server": "redis|valkey", "version": "7.2.4",
//	   "waitaof": "yes|no|unknown", "role": "master",
//	   "connected_replicas": 0, "appendonly": "yes", "appendfsync": "always",
//	   "maxmemory_policy": "noeviction", "clock_skew_ms": -0.1,
//	   "problems": [{"check": "persistence", "detail": "…"}],
//	   "unknown": [{"check": "…", "detail": "…"}],
//	   "guarantee": "durable by configuration", "guarantee_detail": "…",
//	   "identity": "read|refused|unknown", "identity_detail": "…",
//	   "missing_permissions": ["+info"], "run_id": "…", "uptime_s": 86400,
//	   "guard": {"run": "…", "fsync": "other", "ttl_ms": 30000,
//	     "registered": true},
//	   "guard_error": "…",
//	   "guard_verdict": "registered|kept every write|held back|up long enough|fresh deployment|unknown",
//	   "guard_held_back_ms": 0, "guard_detail": "…",
//	   "restart_guard": "applies|cannot apply|unknown",
//	   "durable_confirmations": "yes|no|unknown", "durable_detail": "…",
//	   "enforces": "…"}],
//	 "prefix": "locks:", "guard_records": 3, "guard_longest_ttl_ms": 30000,
//	 "guard_held_back": 0}
//
// Unreadable settings are "unknown", and connected_replicas is -1.
// guarantees counts the masters per guarantee; more_may_fail is negative
// when fewer than a quorum answer. run_id (absent when unknown) and
// uptime_s (-1 when unknown) are the master's running process; guard is
// its restart-guard record, null when it has none (guard_error, absent when
// empty, when it could not be read); guard_held_back_ms is how much longer
// clients hold its grants back (0 unless guard_verdict is "held back");
// prefix is absent when empty.
//
// inspect (one object for one KEY; an array of them for several):
//
//	{"key": "report", "prefix": "locks:", "quorum": 2, "held": true,
//	 "not_lock": false,
//	 "masters": [{"addr": "r1:6379", "error": "…", "type": "string",
//	   "lock": {"token": "…", "ttl_ms": 29000},
//	   "reentrant": {"owners": {"job-7": 2}, "ttl_ms": 29000},
//	   "writer": {"token": "…", "ttl_ms": 29000},
//	   "readers": [{"token": "…", "ttl_ms": 29000}],
//	   "waiting_writer": {"token": "<writer id>", "ttl_ms": 29000},
//	   "fence": 7,
//	   "permits": [{"permit": 2, "token": "…", "ttl_ms": 29000}],
//	   "fair_queue": [{"id": "<waiter id>", "ticket": 4, "ttl_ms": 280}],
//	   "permits_not_scanned": "…",
//	   "holder": {"token": "…", "host": "web-3", "pid": 4242,
//	     "command": "report.sh", "command_pid": 4250,
//	     "started": "2026-01-02T03:04:05Z", "note": "…",
//	     "metadata": {"host": "web-3", "pid": "4242", "…": "…"},
//	     "ttl_ms": 29000, "matches": true},
//	   "not_lock": [{"key": "report", "reason": "a string without a TTL (…)"}],
//	   "run_id": "…",
//	   "guard": {"run": "…", "fsync": "other", "ttl_ms": 30000,
//	     "registered": true},
//	   "guard_error": "…"}],
//	 "holders": [{"kind": "lock|reentrant|writer|reader|permit",
//	   "token": "…", "permit": 2, "masters": ["r1:6379", "r2:6379"],
//	   "quorum": true, "record": {…as holder…}, "keys": ["a", "b"]}],
//	 "waiters": [{"id": "…", "ticket": 4, "ttl_ms": 280,
//	   "masters": ["r1:6379"], "quorum": false}]}
//
// lock, reentrant, writer, waiting_writer and holder are absent when there
// is none, fence is null without a counter, and ttl_ms is -1 for a key
// without expiry. held is true when a holder other than a reader is on a
// quorum; not_lock when some master has a key under the lock's names that
// is not lock state (listed in its not_lock). A holder's permit is set for
// kind "permit"; its record is the holder record with its token (absent
// without one; a master's holder whose token is not its lock's has matches
// false and is ignored). A holder record's metadata is every field of it
// but the token, as the lock's taker attached them (redlock.WithMetadata,
// Lock.SetMetadata; strings, {} when none): an election's value and term,
// or any library user's own. host, pid, command, command_pid, started and
// note repeat the fields of redlock run's record (pid and command_pid as
// numbers); they are empty or 0 in a record without them; keys, with several KEYs, are those its token holds
// on a quorum. waiters is a fair lock's queue in order (ticket, then id),
// with each waiter's highest ticket and longest remaining registration.
// The holder of a fair lock keeps its own registration until it unlocks or
// stops refreshing it (it expires within 6 node timeouts, 300ms at least),
// so just after a grant the first waiter may be the holder itself.
// prefix and permits_not_scanned are absent when empty. A master's
// run_id is its running process as the command's connection read it
// (absent when INFO is refused); guard is its restart-guard record (null
// when it has none), registered true when the record's run is run_id;
// guard_error, absent when empty, says why the record could not be read.
//
// unlock:
//
//	{"key": "report", "prefix": "locks:", "force": false, "removed_on": 3,
//	 "quorum": 2, "refused": false,
//	 "masters": [{"addr": "r1:6379", "removed": ["lock"],
//	   "refused": [{"key": "…", "reason": "…"}],
//	   "permits_not_scanned": "…", "error": "…"}]}
//
// removed lists, with --token, the kinds of hold removed ("lock",
// "reentrant", "writer", "reader", "permit") and, with --force, the keys
// deleted; refused the keys left alone because they are not lock state.
package main
