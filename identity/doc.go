// Package identity holds what a Minca key is: P-256 keys named by did:key,
// key files, and the [Signer] that signs versions and notes; and our profile
// of 01 — Identity's notes (delegations), commands and policies.
//
// 01 — Identity is not among the texts we have; what is here follows the
// profile in DESIGN.md (section Identity), kept in this one package so it can
// be replaced when the official text is known. Nothing outside it reads a
// note's insides: record asks a [Checker] through record.NoteChecker.
//
// # Keys
//
// A DID is did:key:z + base58btc(0x80 0x24 ‖ 33-byte compressed P-256
// point). Signatures are ECDSA P-256 over SHA-256 in IEEE P1363 form (r ‖ s,
// 64 bytes), as 02 §3.1 requires. A [PrivateKey] signs with RFC 6979's
// deterministic nonce (any valid signature verifies, 02 §3).
//
// # Notes
//
// A [Note] is {type: "minca/ucan/dlg@1", payload: {iss, aud, sub, cmd, pol,
// exp?, nbf?, nonce, meta?}, sig}, sig being base64url (no padding) of iss's
// ES256 signature over the canonical JSON of {"payload", "type"}
// ([Note.SignedBytes]). [DecodeNote] checks the shape exactly: no member
// other than those, none null; iss, aud, sub, nonce and sig strings; cmd a
// command; pol a list; exp and nbf integers (Unix seconds, |n| ≤ 2^53 − 1);
// meta an object. A note is valid when its shape is right, its signature
// verifies under iss and — only when a time is given — nbf ≤ t < exp, an
// absent nbf meaning the epoch and an absent exp no end. Records are judged
// with no time (02 §9.3 step 2); live checks and loose versions pass one.
// The sig is decoded only when checked, so a note shown cut short (06 §2.5)
// still decodes.
//
// What a valid note grants ([Note.Grants]):
//   - cmd covers a command when they are equal or the command continues it
//     by whole segments: "/" covers all, "/record" covers "/record/write"
//     and "/record/delete", "/rec" covers nothing of "/record", and
//     "/record/read" grants reading only ([Covers]).
//   - sub is the issuer's own DID (anything the account may do) or
//     "space:<id>" (that space only). A note whose sub is another DID is a
//     note about someone else and grants nothing; a space: note does not
//     reach a version of another space, nor a loose version (no space).
//   - pol, a list of UCAN 1.0 policy statements, must all hold for the
//     invocation's arguments {space, collection, byCreator?, body?}
//     ([Invocation.Args]). A malformed policy grants nothing.
//
// # Policies
//
// [Policy] follows UCAN Delegation 1.0.0-rc.1 (§Policy) with these
// decisions, each where the text is silent or where we take the narrower
// reading:
//   - Statements: ==, != (any value, deep equality of canonical values:
//     1 == 1.0, member order ignored), <, <=, >, >= (the argument must be a
//     number; a selected non-number is false), like (a string pattern; a
//     non-string is false), not, and, or (a list of statements), all, any
//     (a selector and a statement; over a list's elements or an object's
//     values; a non-collection is false).
//   - Three values: a statement whose selector does not resolve (a missing
//     member, an index out of range, .byCreator when unknown) is
//     unresolved; not keeps it unresolved, and/or/all/any are Kleene's,
//     and the policy holds only when every statement is true. So nothing
//     holds because something was missing, whatever the nesting.
//   - ["and", []] and ["or", []] are both true, as UCAN 1.0 requires ("An
//     empty array MUST be treated as true"); "all" over an empty list is
//     true and "any" over one false. So ["not", ["and", []]] (06 §2.5, no
//     spaces) holds for nothing.
//   - like: "*" matches any run of characters, "\*" is a literal star and
//     "\\" a literal backslash; any other backslash makes the pattern, and
//     the policy, malformed.
//   - Selectors ([Selector]): ., .name, ["quoted"], [i], [-i], [lo:hi],
//     [], and ? after any segment (null instead of failing). They start
//     with one dot; ".." is refused.
//   - Depth: statements nest at most [MaxPolicyDepth] (16) deep; a selector
//     is at most [MaxSelectorLen] bytes. Past either, the policy is
//     malformed.
//
// Evaluation work grows with about the policy's size times the arguments':
// each quantifier binds elements strictly below the value it selected, so
// nested quantifiers do not multiply.
//
// # Errors
//
// Refusals are [*NoteError] with a stable code ([Codes]): note/shape,
// note/command, note/issuer, note/signature, note/time, note/audience,
// note/subject, note/policy. record turns them into *record.Refusal with
// the same code.
//
// All functions are safe for concurrent use; [Checker] and [Resolver]
// are safe to share.
package identity
