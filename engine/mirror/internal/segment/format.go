// Package segment is the layout of a segment: an immutable object holding a
// batch of versions as they travel (stubs as stubs), each as one line of
// canonical JSON, zstd-compressed, with a trailer naming its writer,
// sequence number, count and checksum (DESIGN, Segments; 02 §4.5, §4.9).
//
//	header   8 bytes   "MINCASG" 0x01
//	payload  n bytes   one zstd frame: the lines, each ending in '\n'
//	trailer  96 bytes  writer [20] · seq u64 · base u64 · count u32 ·
//	                   rawLen u64 · payloadLen u64 · flags u32 ·
//	                   sha256 [32] over everything before it · "MSG1"
//
// Integers are big-endian. A reader trusts nothing in a segment until the
// checksum matches, and even then allocates only by the bytes it actually
// decodes, up to [Limits]: a file's claims are checked, never used to size
// a buffer. A segment is identified by its content (writer, seq and
// checksum in the trailer), never by its file name or time.
package segment

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// Sizes of the fixed parts.
const (
	HeaderSize  = 8
	TrailerSize = 96
	WriterLen   = 20
)

var (
	headerMagic  = [HeaderSize]byte{'M', 'I', 'N', 'C', 'A', 'S', 'G', 1}
	trailerMagic = [4]byte{'M', 'S', 'G', '1'}
)

// FlagCompacted marks a segment written by compaction: its content is what
// its writer's segments base … seq−1 held (superseded bodies as stubs).
const FlagCompacted uint32 = 1

// Trailer is what a segment says about itself.
type Trailer struct {
	Writer     string // the store writer's id ([ValidWriterID])
	Seq        uint64 // its place in the writer's sequence, from 1
	Base       uint64 // the lowest seq whose content it holds; = Seq unless compacted
	Count      uint32 // lines (versions)
	RawLen     uint64 // bytes of the lines, uncompressed
	PayloadLen uint64 // bytes of the zstd payload
	Flags      uint32
	Sum        [32]byte // SHA-256 of the segment before the checksum
}

// Error is a segment that is not one: truncated, torn, mangled or over a
// limit. Code is stable; it is always a corruption, never a transient
// condition, though a torn file may become whole later (a sync in flight).
type Error struct {
	Code string // "segment/short", "segment/magic", "segment/checksum", …
	Msg  string
}

func (e *Error) Error() string { return "minca/segment: " + e.Code + ": " + e.Msg }

func corrupt(code, format string, a ...any) error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, a...)}
}

// ReadTrailer checks a segment's frame and checksum and returns its
// trailer, without decompressing. data is the whole object.
func ReadTrailer(data []byte) (Trailer, error) {
	t, err := frame(data)
	if err != nil {
		return t, err
	}
	if sha256.Sum256(data[:len(data)-36]) != t.Sum {
		return t, corrupt("segment/checksum", "the checksum does not match the content (torn, partial or altered)")
	}
	if t.Seq == 0 || t.Base == 0 || t.Base > t.Seq {
		return t, corrupt("segment/seq", "seq %d and base %d: want 1 ≤ base ≤ seq", t.Seq, t.Base)
	}
	if t.Flags&FlagCompacted == 0 && t.Base != t.Seq {
		return t, corrupt("segment/seq", "a segment that is not compacted has base = seq")
	}
	if uint64(t.Count)*2 > t.RawLen || (t.Count == 0) != (t.RawLen == 0) {
		return t, corrupt("segment/count", "%d lines cannot take %d bytes", t.Count, t.RawLen)
	}
	return t, nil
}

// PeekTrailer returns what a damaged segment's trailer claims (its writer,
// sequence and count), when its frame is whole — both magics, a writer id,
// the payload length the object holds — whatever its checksum says. ok is
// false when even that is not there. The claims are unverified: they are
// for naming damage ("held 12 versions by its trailer"), never for reading.
func PeekTrailer(data []byte) (t Trailer, ok bool) {
	t, err := frame(data)
	return t, err == nil
}

// frame checks a segment's frame (length, magics, writer id, payload
// length) and reads its trailer's fields, without the checksum.
func frame(data []byte) (Trailer, error) {
	var t Trailer
	if len(data) < HeaderSize+TrailerSize {
		return t, corrupt("segment/short", "%d bytes is shorter than a header and a trailer (%d)", len(data), HeaderSize+TrailerSize)
	}
	if [HeaderSize]byte(data[:HeaderSize]) != headerMagic {
		return t, corrupt("segment/magic", "the header is not \"MINCASG\" version 1")
	}
	tr := data[len(data)-TrailerSize:]
	if [4]byte(tr[TrailerSize-4:]) != trailerMagic {
		return t, corrupt("segment/magic", "the trailer does not end in \"MSG1\" (torn or truncated)")
	}
	w := string(tr[:WriterLen])
	if !ValidWriterID(w) {
		return t, corrupt("segment/writer", "the trailer's writer id is not %d characters of [a-z2-7]", WriterLen)
	}
	t.Writer = w
	p := tr[WriterLen:]
	t.Seq = binary.BigEndian.Uint64(p[0:])
	t.Base = binary.BigEndian.Uint64(p[8:])
	t.Count = binary.BigEndian.Uint32(p[16:])
	t.RawLen = binary.BigEndian.Uint64(p[20:])
	t.PayloadLen = binary.BigEndian.Uint64(p[28:])
	t.Flags = binary.BigEndian.Uint32(p[36:])
	copy(t.Sum[:], p[40:72])
	if want := uint64(len(data) - HeaderSize - TrailerSize); t.PayloadLen != want {
		return t, corrupt("segment/length", "the trailer claims a payload of %d bytes, the object holds %d", t.PayloadLen, want)
	}
	return t, nil
}

func appendTrailer(dst []byte, t *Trailer) []byte {
	dst = append(dst, t.Writer...)
	dst = binary.BigEndian.AppendUint64(dst, t.Seq)
	dst = binary.BigEndian.AppendUint64(dst, t.Base)
	dst = binary.BigEndian.AppendUint32(dst, t.Count)
	dst = binary.BigEndian.AppendUint64(dst, t.RawLen)
	dst = binary.BigEndian.AppendUint64(dst, t.PayloadLen)
	dst = binary.BigEndian.AppendUint32(dst, t.Flags)
	return dst
}
