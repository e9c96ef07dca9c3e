// Package canonical reads JSON into a value model that keeps every number as
// IEEE 754 binary64 and every lone surrogate, writes the canonical form of
// 02 §1, and computes content ids (02 §2).
//
// # The value model
//
// A value read by [Parse] is one of:
//
//	nil         JSON null
//	bool        true, false
//	float64     every number (binary64, as 02 §1 requires)
//	string      a string, in WTF-8: valid UTF-8, except that a lone
//	            surrogate (which JSON can carry as \udxxx) is held as its
//	            three-byte generalized UTF-8 form (ED A0 80 … ED BF BF)
//	[]any       an array
//	*Object     an object: its members in the order they were read
//
// [Append] and [Marshal] accept the same types, and also int, int64 and
// uint64 (written as the binary64 they round to) and []string, for callers
// building values in Go.
//
// Go's encoding/json cannot be used for Minca's hashes: it replaces lone
// surrogates with U+FFFD and its number and member order differ from 02 §1.
//
// # Guarantees
//
// Parse accepts exactly RFC 8259 JSON in UTF-8, refusing duplicate member
// names, numbers beyond binary64, and nesting deeper than [MaxDepth], with a
// typed [*Error] naming what was wrong and where. It never panics on any
// input. Values returned share no memory with the input slice. Functions in
// this package are safe for concurrent use; a value must not be mutated while
// another goroutine reads it.
package canonical
