// Package recorded makes, from a lock kind's script, the script that runs
// it for a lock with a holder record (redlock.WithMetadata): the record is
// KEYS[3], the hash layout.Holder of the lock's first key (KEYS[2]),
// which the kind's script does not see (its KEYS are the others, in their
// order), and after the kind's script the record follows the lock:
//
//   - Acquire: the acquire script's ARGV end with the record's fields, as
//     field, value pairs, and their count (-1: no fields, keep the record
//     as it is); a grant writes the record, its field "token" naming the
//     lock's holder on the master (the first key's value, or a reentrant
//     lock's owner), then syncs it;
//   - Sync (extends, releases, a waiter's withdrawal): the record is
//     synced after the script;
//   - Read (a check): the script runs as it is, without the record.
//
// To sync is to give the record the first key's remaining TTL when it
// names the first key's holder, and to delete it otherwise (the lock is
// gone, or its holder is another's): a record never outlives its lock on
// a master and never names another holder's lock. (A lock in its last
// millisecond, PTTL 0, keeps its record as it is: every sync gave the two
// the same expiry, and PEXPIRE 0 would delete the record before the lock.)
//
// Both redlock, which runs the scripts, and its digests generator, which
// hashes them at build time, make them here, so that the two agree.
package recorded
