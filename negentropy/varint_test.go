package negentropy

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestVarint(t *testing.T) {
	cases := []struct {
		n   uint64
		enc []byte
	}{
		{0, []byte{0}},
		{1, []byte{1}},
		{127, []byte{0x7f}},
		{128, []byte{0x81, 0x00}},
		{255, []byte{0x81, 0x7f}},
		{16384, []byte{0x81, 0x80, 0x00}},
		{math.MaxUint64, []byte{0x81, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
	}
	for _, c := range cases {
		if got := AppendVarint(nil, c.n); !bytes.Equal(got, c.enc) {
			t.Errorf("AppendVarint(%d) = %x, want %x", c.n, got, c.enc)
		}
		v, n, err := ReadVarint(append(c.enc, 0xaa))
		if err != nil || v != c.n || n != len(c.enc) {
			t.Errorf("ReadVarint(%x) = %d, %d, %v", c.enc, v, n, err)
		}
	}
}

func TestVarintBad(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{0x80},
		{0xff, 0xff},
		{0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, // 2^64
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f},
	} {
		if _, _, err := ReadVarint(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("ReadVarint(%x): err = %v, want ErrMalformed", b, err)
		}
	}
}
