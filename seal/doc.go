// Package seal is our profile of private spaces (03 §8–§9, not among our
// texts; docs/private-spaces.md): how a private space's bodies, links and
// files are sealed, how its keys are made, named, changed and chained, how
// they reach members (boxes to member keys, invites), and which key a
// writer seals under. It implements what 02 fixes: a sealed body
// {sealed, keyId} (§3.1) whose bodyHash covers the envelope (§4.9), links
// sealed with the body as {"body", "links"} (§5.1), onePer keys under K₀
// (§7.3) and tags under the key a body is sealed with (§8.2), and a reader
// taking no key from a key change whose earlier leaves K₀ out (§7.3).
//
// Primitives, all from the standard library: AES-256-GCM (crypto/aes,
// crypto/cipher), HKDF-SHA-256 (crypto/hkdf), and HPKE (crypto/hpke, RFC
// 9180: DHKEM(P-256, HKDF-SHA256) over crypto/ecdh, HKDF-SHA256,
// AES-256-GCM) for boxes.
//
//	NewKey() *Key; KeyFromBytes, ParseKey; (*Key).ID, Text, OneKey, TagKey, ReadSeed, ReadKeyDID
//	(*Key).Seal(dst, pt, Binding) []byte; (*Key).Open(dst, env, Binding, field)  // the envelope
//	SealBody(k, space, coll, key, Content) (*canonical.Object, error)             // {sealed, keyId}
//	OpenBody(k, space, coll, key, body) (*Opened, error); ParseSealed; IsSealed
//	SealFile(k, space, data) []byte; OpenFile; FileKeyID                  // whole
//	NewFileSealer(k, space, w) *FileSealer; NewFileOpener(k, space, r, size) // streams (docs/private-spaces.md §4)
//	SealedFileSize(n), OpenedFileSize(n)
//	NewKeyChange(space, firstID, next, earlier) (*KeyChange, error); ReadKeyChange; (*KeyChange).Open
//	NewMemberKey, DeriveMemberKey, ParseMemberKey, ParseMemberPublic; ReadMemberKey (sys.memberkey)
//	NewBox(k, space, member, to) (*Box, error); ParseBox, ReadBox; (*Box).Open(m, space) (sys.box)
//	InviteKey{Key}.Object(); ParseInviteKey
//	NewKeyring(space, firstID) *Keyring; Offer, Take, Key, First, Keys, OneKey, TagKey,
//	    Current([]Head), NewKeyChange, SealBody, SealFile, OpenBody, OpenVersion, OpenFile
//	Codes() []string
//
// # Errors
//
// Everything this package reads comes from other members or from storage
// anyone may have written: no input panics, and every failure is an
// [*Error] with a stable code of [Codes] and one of the sentinels
// [ErrMalformed], [ErrNoKey], [ErrOpen], [ErrPlaintext], [ErrChain],
// [ErrNoCurrentKey]. ErrNoKey is not damage: it is what a reader without
// the key meets, and it skips what needs the key (02 §9.4). Nothing that
// fails to authenticate is returned, in part or whole.
//
// # Bounds
//
// A sealed body opens in time and memory linear in its size; an earlier
// chain holds at most [MaxEarlier] keys; a box is 114 bytes. A key keeps
// at most 1,024 subkeys it opened with (each 16 bytes of salt and an AES
// instance), then starts afresh.
//
// # Concurrency
//
// A *Key and a *Keyring are safe for concurrent use. Every other value is
// immutable once returned, and the package keeps no state of its own.
package seal
