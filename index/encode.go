package index

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"slices"

	"github.com/minca-go/minca/canonical"
)

// Order-preserving encodings (docs/queries.md, "Order"): the bytes of
// two values compare as the values do in a query's order, so the index is
// ordered by them and a cursor is one of them.

// Type ranks of encoded values: absent first, then null, false, true,
// numbers, strings, arrays, objects.
const (
	rankAbsent byte = 0x01
	rankNull   byte = 0x02
	rankFalse  byte = 0x03
	rankTrue   byte = 0x04
	rankNumber byte = 0x05
	rankString byte = 0x06
	rankArray  byte = 0x07
	rankObject byte = 0x08
)

// maxValueEnc bounds an encoded value in a key or a position: longer
// encodings are cut to it, and values alike in their first maxValueEnc
// bytes sort as equals, their tie broken by @createdAt then @key.
const maxValueEnc = 512

// appendEsc appends s so that the encodings of two strings compare as the
// strings do bytewise and none is a prefix of another: 0x00 as 00 FF, and
// 00 01 at the end.
func appendEsc(b []byte, s string) []byte {
	b = slices.Grow(b, len(s)+2) // once, not as each byte comes
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			b = append(b, 0, 0xff)
		} else {
			b = append(b, s[i])
		}
	}
	return append(b, 0, 1)
}

// appendNumber appends f's 8 bytes in binary64 order: -0 as 0.
func appendNumber(b []byte, f float64) []byte {
	if f == 0 {
		f = 0
	}
	u := math.Float64bits(f)
	if u>>63 == 1 {
		u = ^u
	} else {
		u |= 1 << 63
	}
	return binary.BigEndian.AppendUint64(b, u)
}

// appendValue appends v's encoding (present: a value of canonical's model),
// cut to maxValueEnc bytes. Arrays and objects order by their canonical
// JSON text.
func appendValue(b []byte, v any, present bool) []byte {
	start := len(b)
	if !present {
		return append(b, rankAbsent)
	}
	switch x := v.(type) {
	case nil:
		b = append(b, rankNull)
	case bool:
		if x {
			b = append(b, rankTrue)
		} else {
			b = append(b, rankFalse)
		}
	case float64:
		b = appendNumber(append(b, rankNumber), x)
	case string:
		b = appendEsc(append(b, rankString), x)
	default:
		text, err := canonical.Marshal(v)
		if err != nil { // a value Parse never makes: order it as null
			return append(b, rankNull)
		}
		r := rankObject
		if _, ok := v.([]any); ok {
			r = rankArray
		}
		b = appendEsc(append(b, r), string(text))
	}
	if len(b)-start > maxValueEnc {
		b = b[:start+maxValueEnc]
	}
	return b
}

// valueCut reports whether v's encoding is cut to maxValueEnc: it then
// stands for every value sharing its first bytes, so it bounds a scan only
// loosely.
func valueCut(v any) bool {
	return len(appendValue(nil, v, true)) >= maxValueEnc
}

// createdLen is the length of an encoded @createdAt: presence, then the
// Unix milliseconds as a sign-flipped big-endian int64.
const createdLen = 9

func appendCreated(b []byte, ms int64, present bool) []byte {
	if !present {
		return append(b, make([]byte, createdLen)...)
	}
	return binary.BigEndian.AppendUint64(append(b, 1), uint64(ms)^1<<63)
}

func decodeCreated(b []byte) (ms int64, present bool) {
	if b[0] == 0 {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[1:]) ^ 1<<63), true
}

// appendSuffix appends what ends every entry of a record: @createdAt, the
// key, 0x00 (no key holds one, so no suffix is a prefix of another) and
// the key's length, by which the key is found from the end.
func appendSuffix(b []byte, created []byte, key string) []byte {
	b = append(b, created...)
	b = append(b, key...)
	return append(b, 0, byte(len(key)))
}

// splitSuffix finds the suffix at the end of an index key: the encoded
// @createdAt, the record key, and where the suffix starts; ok false when k
// does not end in one.
func splitSuffix(k []byte) (created, key []byte, at int, ok bool) {
	if len(k) < createdLen+3 {
		return nil, nil, 0, false
	}
	n := int(k[len(k)-1])
	at = len(k) - 2 - n - createdLen
	if n == 0 || at < 0 || k[len(k)-2] != 0 {
		return nil, nil, 0, false
	}
	return k[at : at+createdLen], k[at+createdLen : len(k)-2], at, true
}

// Tables of the index (the first byte of its keys). Every key then has
// the space and collection prefix (prefixOf); every entry but a locator
// ends with the record's suffix (appendSuffix).
//
//	'L' prefix key 0x00                           → @createdAt ‖ @createdBy: the record's locator
//	'P' prefix suffix                             → id, @createdBy, the version's JSON (covering)
//	'C' prefix esc(@createdBy) suffix             → (nothing): by creator
//	'B' prefix esc(rel) esc(to) suffix            → (nothing): backlinks
//	'G' prefix esc(tag) suffix                    → (nothing): by tag
//	'F' prefix field(8) value suffix              → (nothing): a declared field
const (
	tLocator  byte = 'L'
	tPrimary  byte = 'P'
	tCreator  byte = 'C'
	tBacklink byte = 'B'
	tTag      byte = 'G'
	tField    byte = 'F'
)

// longCollection is the length past which a collection's name is hashed
// in keys (a record may name any string, 02 §10).
const longCollection = 128

// prefixOf is table ‖ space tag (33 bytes) ‖ collection: the escaped name,
// or 0xFF ‖ SHA-256 of a long one (an escaped name never starts with 0xFF:
// it is UTF-8).
func prefixOf(table byte, space, collection string) []byte {
	return withTable(table, placeOf(space, collection))
}

// placeOf is a prefix without its table byte.
func placeOf(space, collection string) []byte {
	b := make([]byte, 1, 1+33+len(collection)+2)
	b = appendSpace(b, space)
	if len(collection) > longCollection {
		h := sha256.Sum256([]byte("minca/index/collection|" + collection))
		return append(append(b, 0xff), h[:]...)
	}
	return appendEsc(b, collection)
}

// withTable sets a place's table byte, in a copy with room to grow.
func withTable(table byte, place []byte) []byte {
	b := make([]byte, len(place), len(place)+64)
	copy(b, place)
	b[0] = table
	return b
}

// appendSpace appends a space's 33-byte tag: 0x01 ‖ the digest of an id in
// its canonical text, else 0x02 ‖ SHA-256 of the text.
func appendSpace(b []byte, space string) []byte {
	if id, err := canonical.ParseID(space); err == nil {
		var text [canonical.IDLen]byte
		if t, _ := id.AppendText(text[:0]); string(t) == space {
			return append(append(b, 1), id[:]...)
		}
	}
	h := sha256.Sum256([]byte("minca/index/space|" + space))
	return append(append(b, 2), h[:]...)
}

// fieldTag names a declared field's entries: 8 bytes of a hash of its path.
func fieldTag(path string) []byte {
	h := sha256.Sum256([]byte("minca/index/field|" + path))
	return h[:8]
}

// prefixEnd is the first key after every key with prefix p (nil: none).
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func cat(parts ...[]byte) []byte {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}
