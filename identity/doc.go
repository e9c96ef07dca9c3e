// Package identity holds what a Minca key is: P-256 keys named by did:key,
// key files, and the [Signer] that signs versions and notes; and our profile
// of 01 — Identity's notes (delegations), commands and policies.
//
// 01 — Identity is not among the texts we have; what is here follows the
// profile in DESIGN.md (section Identity), kept in this one package so it can
// be replaced when the official text is known.
//
// A DID is did:key:z + base58btc(0x80 0x24 ‖ 33-byte compressed P-256
// point). Signatures are ECDSA P-256 over SHA-256 in IEEE P1363 form (r ‖ s,
// 64 bytes), as 02 §3.1 requires. All functions are safe for concurrent use.
package identity
