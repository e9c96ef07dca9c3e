// Package negentropy implements range-based set reconciliation by
// Negentropy protocol V1 (hoytech/negentropy, docs/negentropy-protocol-v1.md),
// byte for byte as the reference implementations write it.
//
// Two peers each hold a set of items, an item being a 64-bit timestamp and a
// 32-byte id, sorted by timestamp and then id (§Preparation). The client
// (initiator) calls [Client.Initiate] and sends the message to the server,
// which answers each message with [Server.Reconcile]; the client feeds every
// answer to [Client.Reconcile], which returns the ids only it has (have), the
// ids only the server has (need) and the next message, or no message once the
// sets are reconciled.
//
// Items are read through the small [Storage] interface. [Vector] is a sorted
// slice built by insert then seal, as in the reference; [Tree] is a B+tree
// that caches counts and id sums in its nodes, so the fingerprint of any range
// costs O(log n) whatever the range's length.
//
// Messages come from untrusted peers: every malformed message yields an error
// wrapping [ErrMalformed], never a panic, and nothing is allocated by a size a
// peer claims beyond what its message holds. The package keeps no state
// outside the values a caller creates.
package negentropy
