package segment

import (
	"bytes"
	"crypto/sha256"
	"testing"
)

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

// FuzzDecode: no input panics or decodes past the limits; whatever decodes
// re-encodes to a segment with the same trailer fields and lines.
func FuzzDecode(f *testing.F) {
	c, err := NewCodec(Limits{MaxRaw: 1 << 20})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	for _, n := range []int{0, 1, 5} {
		d, _, err := c.Encode(Header{Writer: testWriter, Seq: 3}, sampleLines(n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(d)
		f.Add(d[:len(d)/2])
	}
	f.Add([]byte("MINCASG\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if pt, ok := PeekTrailer(data); ok && !ValidWriterID(pt.Writer) {
			t.Fatalf("peeked a trailer with writer %q", pt.Writer)
		}
		s, err := c.Decode(data)
		if err != nil {
			return
		}
		if s.RawLen > 1<<20 || len(s.Lines) != int(s.Count) {
			t.Fatalf("decoded past its limits: %+v", s.Trailer)
		}
		again, tr, err := c.Encode(Header{Writer: s.Writer, Seq: s.Seq, Base: s.Base, Flags: s.Flags}, s.Lines)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		s2, err := c.Decode(again)
		if err != nil || tr.Count != s.Count || tr.RawLen != s.RawLen {
			t.Fatalf("round trip: %v", err)
		}
		for i := range s.Lines {
			if !bytes.Equal(s.Lines[i], s2.Lines[i]) {
				t.Fatalf("line %d differs", i)
			}
		}
	})
}

// FuzzTrailer reseals arbitrary trailers so the fuzzer gets past the
// checksum and reaches the claims behind it.
func FuzzTrailer(f *testing.F) {
	c, err := NewCodec(Limits{MaxRaw: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	defer c.Close()
	d, _, err := c.Encode(Header{Writer: testWriter, Seq: 3}, sampleLines(4))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(d[HeaderSize:len(d)-TrailerSize], d[len(d)-TrailerSize:len(d)-36])
	f.Fuzz(func(t *testing.T, payload, fields []byte) {
		if len(fields) != TrailerSize-36 {
			return
		}
		seg := append(append(append([]byte{}, headerMagic[:]...), payload...), fields...)
		sum := sha256.Sum256(seg)
		seg = append(append(seg, sum[:]...), trailerMagic[:]...)
		s, err := c.Decode(seg)
		if err == nil && (s.RawLen > 1<<16 || len(s.Lines) != int(s.Count)) {
			t.Fatalf("decoded past its limits: %+v", s.Trailer)
		}
	})
}

// FuzzParseName: no name panics; a name that parses is exactly the name
// its parts make.
func FuzzParseName(f *testing.F) {
	f.Add(Prefix + testWriter + "/000000000042-0123456789abcdef0123456789abcdef.seg")
	f.Add(Prefix + testWriter + "/000000000042-0123456789abcdef0123456789abcdef (conflicted copy).seg")
	f.Add("segments/x")
	f.Fuzz(func(t *testing.T, name string) {
		n, ok := ParseName(name)
		if !ok {
			return
		}
		if got := n.Name(); got != name {
			t.Fatalf("%q parsed to %+v, which names %q", name, n, got)
		}
	})
}
