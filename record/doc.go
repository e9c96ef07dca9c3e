// Package record is the data model of 02 — Records: the signed [Version]
// (§3), which keeps every member it was given so that re-hashing reproduces
// its id; signing and verifying (§3.3) with the passing-verdict cache §3.2
// allows; stubs (§4.5); keys (§4.1); the next version (§4.2); the ordering
// rule (§4.3); the shape checks (§4.6); the chain check (§4.7); writer lines,
// forks and breaks (§4.10); links (§5.1); loose versions (§3.5); and the
// limits of §10.
//
// A version is built one way: as a [Draft], what its writer decides, typed
// (space, collection, createdAt, key, the version it follows, its log
// place, seen, retain, body, links, files, tags), each member left out
// where §3.1 says it is absent. Signing the draft gives the version
// (§3.3). The node's write path, the benchmarks' corpora and the tests all
// build versions so.
//
// A version's id and log.prev are parsed once, as it is read
// ([Version.Digest], [Version.LogPrevDigest]): whatever keys by them takes
// the digests from there.
//
// Every refusal is a [*Refusal] with a stable reason code ("shape/seq",
// "crypto/signature", "chain/genesis", "key/owner", …) and a message naming
// the field and the rule. [Codes] lists them all.
//
// A *Version returned by [Decode] has passed every shape check of §4.6 that
// needs no hashing; [Verifier.Verify] adds the body hash (§4.6 #9) and the
// crypto gate (§3.3). A Version is immutable once decoded and safe to share
// between goroutines; [Verifier] and [VerdictCache] are safe for concurrent
// use.
package record
