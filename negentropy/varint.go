package negentropy

import "fmt"

// AppendVarint appends n as a Varint: base-128 digits, most significant
// first, the high bit set on every byte but the last (§Varint).
func AppendVarint(dst []byte, n uint64) []byte {
	var tmp [10]byte
	i := len(tmp) - 1
	tmp[i] = byte(n & 0x7f)
	for n >>= 7; n != 0; n >>= 7 {
		i--
		tmp[i] = byte(n&0x7f) | 0x80
	}
	return append(dst, tmp[i:]...)
}

// ReadVarint decodes the Varint at the start of b and returns it with the
// number of bytes read (§Varint). A truncated varint or one past 64 bits is
// an error wrapping [ErrMalformed].
func ReadVarint(b []byte) (uint64, int, error) {
	var v uint64
	for i, c := range b {
		if v>>57 != 0 {
			return 0, 0, fmt.Errorf("%w: varint exceeds 64 bits", ErrMalformed)
		}
		v = v<<7 | uint64(c&0x7f)
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("%w: truncated varint", ErrMalformed)
}
