package sqlite

import (
	"bytes"
	"database/sql"
	"testing"
)

// trainedCodec is a codec whose table is made from values like those
// given, as a store's first commit past its sample would make it.
func trainedCodec(t testing.TB, like []byte) *codec {
	t.Helper()
	return trainedCodecOf(t, tablesNone, like)
}

// trainedCodecOf is trainedCodec of a store keeping tables of kind: the
// Huffman codes alone (a store of the schema before), or a dictionary
// and Huffman codes (a store made now).
func trainedCodecOf(t testing.TB, kind tablesKind, like []byte) *codec {
	t.Helper()
	c := &codec{train: true, trainAt: 4 << 10}
	c.load(nil, tablesNone, true, 4<<10)
	if kind == tablesDict {
		c.kind = tablesDict // as a new store's, its zs2 empty
	}
	for c.pack(like, new([]byte)).z == nil && !c.tableReady() {
	}
	if c.makeTable() == nil {
		t.Fatal("no table made")
	}
	return c
}

// Whatever a row holds, unpack returns its value or an error: a damaged
// store never panics the reader.
func FuzzUnpack(f *testing.F) {
	fuzzUnpack(f, trainedCodec(f, fuzzLike))
}

// fuzzLike is the value the fuzzers' codecs are trained on and their
// first seed.
var fuzzLike = bytes.Repeat([]byte(`{"author":"abcdefghijklmnopqrstuvwxyz234567","createdAt":1700000000000,"sig":"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo="}`), 3)

// fuzzUnpack fuzzes c's unpack from seeds of fuzzLike coded whole and
// cut, and from extra.
func fuzzUnpack(f *testing.F, c *codec, extra ...[]byte) {
	r := c.pack(fuzzLike, new([]byte))
	if r.z == nil {
		f.Fatal("the value was not coded")
	}
	f.Add(r.v, int64(1))
	f.Add(r.v[:len(r.v)/2], int64(1))
	f.Add([]byte{0x80, 0x01, 0, 0, 0, 0, 0, 0}, int64(1))
	for _, e := range extra {
		f.Add(e, int64(1))
	}
	f.Add([]byte{}, int64(2))
	f.Fuzz(func(t *testing.T, v []byte, z int64) {
		out, err := c.unpack(v, sql.NullInt64{Int64: z, Valid: true}, nil)
		if err == nil && (len(out) < compressMin || len(out) > compressMax) {
			t.Fatalf("a %d-byte value decoded", len(out))
		}
	})
}

// A value coded reads back as it was, bytes the samples never held too.
func TestCodedRoundTrip(t *testing.T) {
	like := bytes.Repeat([]byte(`{"key":"notes/1","body":{"text":"some words"}}`), 5)
	c := trainedCodec(t, like)
	for i, v := range [][]byte{like, append(like, 0xfe, 0x80, 0)} {
		r := c.pack(v, new([]byte))
		if r.z == nil {
			t.Fatalf("value %d was not coded", i)
		}
		got, err := c.unpack(r.v, sql.NullInt64{Int64: r.z.(int64), Valid: true}, nil)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%q came back %q, %v", v, got, err)
		}
	}
}

// Whatever a row of a store made now holds, unpack returns its value or
// an error: a damaged store never panics the reader.
func FuzzUnpackDict(f *testing.F) {
	fuzzUnpack(f, trainedCodecOf(f, tablesDict, fuzzLike), []byte{0x05, 0xff, 0xff, 0xff})
}

// A value coded with a dictionary and Huffman codes reads back as it
// was, bytes the samples never held too, and takes fewer bytes than the
// codes alone make of it.
func TestDictCodedRoundTrip(t *testing.T) {
	like := bytes.Repeat([]byte(`{"key":"notes/1","body":{"text":"some words"}}`), 5)
	c, h := trainedCodecOf(t, tablesDict, like), trainedCodec(t, like)
	for i, v := range [][]byte{like, append(like, 0xfe, 0x80, 0)} {
		r := c.pack(v, new([]byte))
		if r.z == nil {
			t.Fatalf("value %d was not coded", i)
		}
		got, err := c.unpack(r.v, sql.NullInt64{Int64: r.z.(int64), Valid: true}, nil)
		if err != nil || !bytes.Equal(got, v) {
			t.Fatalf("%q came back %q, %v", v, got, err)
		}
		if hr := h.pack(v, new([]byte)); len(r.v) >= len(hr.v) {
			t.Fatalf("value %d: %d bytes with the dictionary, %d with the codes alone", i, len(r.v), len(hr.v))
		}
	}
}
