// Package record is the data model of 02 — Records: the signed [Version]
// (§3), which keeps every member it was given so that re-hashing reproduces
// its id; signing and verifying (§3.3) with the passing-verdict cache §3.2
// allows; stubs (§4.5); keys (§4.1); the next version (§4.2); the ordering
// rule (§4.3); the shape checks (§4.6); the chain check (§4.7); writer lines,
// forks and breaks (§4.10); links (§5.1); loose versions (§3.5); and the
// limits of §10.
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
