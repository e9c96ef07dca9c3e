package canonical

import (
	"crypto/sha256"
	"strconv"
)

// ID is the 32-byte SHA-256 digest a content id names (02 §2).
type ID [32]byte

// IsZero reports whether id is the zero ID, which names no version: what a
// field of type ID holds when it names none.
func (id ID) IsZero() bool { return id == ID{} }

// IDLen is the length of a content id's text: "b" and 52 base32 characters.
const IDLen = 53

const base32Lower = "abcdefghijklmnopqrstuvwxyz234567"

// IDOf returns the id of bytes: the SHA-256 of them (02 §2).
func IDOf(b []byte) ID { return sha256.Sum256(b) }

// ContentID returns the id of the canonical form of v.
func ContentID(v any) (ID, error) {
	b, err := Marshal(v)
	if err != nil {
		return ID{}, err
	}
	return IDOf(b), nil
}

// String is the id's text: "b" ‖ lowercase base32 without padding (02 §2).
func (id ID) String() string {
	var out [IDLen]byte
	return string(id.appendText(out[:0]))
}

// AppendText appends the id's text to b.
func (id ID) AppendText(b []byte) ([]byte, error) { return id.appendText(b), nil }

func (id ID) appendText(b []byte) []byte {
	b = append(b, 'b')
	var acc uint32
	bits := 0
	for _, c := range id {
		acc = acc<<8 | uint32(c)
		bits += 8
		for bits >= 5 {
			bits -= 5
			b = append(b, base32Lower[acc>>bits&31])
		}
	}
	if bits > 0 {
		b = append(b, base32Lower[acc<<(5-bits)&31])
	}
	return b
}

// MarshalText implements encoding.TextMarshaler.
func (id ID) MarshalText() ([]byte, error) { return id.appendText(nil), nil }

// UnmarshalText implements encoding.TextUnmarshaler with [ParseID]'s rules.
func (id *ID) UnmarshalText(b []byte) error {
	p, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = p
	return nil
}

// ParseID decodes a content id strictly (02 §2): exactly 53 characters,
// starting with "b", the rest from the base32 alphabet in either case, and
// the padding bits of the last character zero.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != IDLen {
		return id, &Error{Code: CodeID, Offset: -1, Msg: "a content id is 53 characters, got " + strconv.Itoa(len(s))}
	}
	if s[0] != 'b' {
		return id, &Error{Code: CodeID, Offset: 0, Msg: "a content id starts with \"b\""}
	}
	var acc uint32
	bits, n := 0, 0
	for i := 1; i < len(s); i++ {
		v, ok := base32Value(s[i])
		if !ok {
			return id, &Error{Code: CodeID, Offset: i, Msg: "character outside the base32 alphabet"}
		}
		acc = acc<<5 | uint32(v)
		bits += 5
		if bits >= 8 {
			bits -= 8
			id[n] = byte(acc >> bits)
			n++
		}
	}
	if acc&(1<<bits-1) != 0 {
		return ID{}, &Error{Code: CodeID, Offset: len(s) - 1, Msg: "non-zero padding bits in the last character"}
	}
	return id, nil
}

// ParseExactID decodes an id only in its one canonical text (lower case),
// the text [ID.String] writes and so the only one a verified version's id
// has (02 §3.3 step 1 compares the text). It is what a reader parses an id
// with once, where the id comes in, before it keys anything by it.
func ParseExactID(s string) (ID, bool) {
	if len(s) != IDLen {
		return ID{}, false
	}
	// ParseID takes upper case too, and refuses anything else that is not
	// the one text of a digest (non-zero padding bits).
	for i := 1; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			return ID{}, false
		}
	}
	d, err := ParseID(s)
	return d, err == nil
}

func base32Value(c byte) (byte, bool) {
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a', true
	case c >= 'A' && c <= 'Z':
		return c - 'A', true
	case c >= '2' && c <= '7':
		return c - '2' + 26, true
	}
	return 0, false
}

// Compare orders two ids as their texts compare, character by character
// (02 §4.3). That is not the order of the digests: in the text, the digits
// 2–7 (values 26–31) sort before the letters.
func (id ID) Compare(other ID) int {
	for i := 0; i < 52; i++ {
		a, b := id.group(i), other.group(i)
		if a != b {
			if textRank(a) < textRank(b) {
				return -1
			}
			return 1
		}
	}
	return 0
}

// group returns the i-th 5-bit group of the digest, as the text encodes it.
func (id ID) group(i int) byte {
	bit := i * 5
	byteIdx, off := bit/8, bit%8
	var w uint16 = uint16(id[byteIdx]) << 8
	if byteIdx+1 < len(id) {
		w |= uint16(id[byteIdx+1])
	}
	return byte(w>>(11-off)) & 31
}

func textRank(v byte) byte {
	if v < 26 {
		return v + 6 // letters come after the six digits
	}
	return v - 26
}
