package negentropy

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
)

// Fingerprint is the 16-byte digest of a range (§Fingerprint Algorithm).
type Fingerprint [FingerprintSize]byte

// Accumulator is the sum mod 2^256 of ids read as 32-byte little-endian
// integers (§Fingerprint Algorithm), held as four 64-bit words, least
// significant first. The zero value is the empty sum.
type Accumulator [4]uint64

// AddID adds one id to the sum.
func (a *Accumulator) AddID(id *ID) {
	var c uint64
	a[0], c = bits.Add64(a[0], binary.LittleEndian.Uint64(id[0:8]), 0)
	a[1], c = bits.Add64(a[1], binary.LittleEndian.Uint64(id[8:16]), c)
	a[2], c = bits.Add64(a[2], binary.LittleEndian.Uint64(id[16:24]), c)
	a[3], _ = bits.Add64(a[3], binary.LittleEndian.Uint64(id[24:32]), c)
}

// Add adds another sum.
func (a *Accumulator) Add(b *Accumulator) {
	var c uint64
	a[0], c = bits.Add64(a[0], b[0], 0)
	a[1], c = bits.Add64(a[1], b[1], c)
	a[2], c = bits.Add64(a[2], b[2], c)
	a[3], _ = bits.Add64(a[3], b[3], c)
}

// Sub subtracts another sum, mod 2^256.
func (a *Accumulator) Sub(b *Accumulator) {
	var c uint64
	a[0], c = bits.Sub64(a[0], b[0], 0)
	a[1], c = bits.Sub64(a[1], b[1], c)
	a[2], c = bits.Sub64(a[2], b[2], c)
	a[3], _ = bits.Sub64(a[3], b[3], c)
}

// Fingerprint hashes the sum with the count of ids summed: SHA-256 of the
// 32 little-endian bytes then the Varint count, first 16 bytes
// (§Fingerprint Algorithm).
func (a *Accumulator) Fingerprint(count uint64) Fingerprint {
	var buf [IDSize + 10]byte
	binary.LittleEndian.PutUint64(buf[0:], a[0])
	binary.LittleEndian.PutUint64(buf[8:], a[1])
	binary.LittleEndian.PutUint64(buf[16:], a[2])
	binary.LittleEndian.PutUint64(buf[24:], a[3])
	in := AppendVarint(buf[:IDSize], count)
	sum := sha256.Sum256(in)
	var fp Fingerprint
	copy(fp[:], sum[:FingerprintSize])
	return fp
}
