package segment

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func newCodec(t testing.TB) *Codec {
	t.Helper()
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func sampleLines(n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(fmt.Sprintf(`{"id":"b%052d","seq":%d,"body":{"text":"line %d"}}`, i, i, i))
	}
	return out
}

const testWriter = "abcdefghijklmnopqrst"

func TestRoundTrip(t *testing.T) {
	c := newCodec(t)
	for _, n := range []int{0, 1, 3, 500} {
		lines := sampleLines(n)
		data, tr, err := c.Encode(Header{Writer: testWriter, Seq: 7}, lines)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.Decode(data)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if s.Trailer != tr || s.Writer != testWriter || s.Seq != 7 || s.Base != 7 || int(s.Count) != n {
			t.Fatalf("trailer %+v, want %+v", s.Trailer, tr)
		}
		if len(s.Lines) != n {
			t.Fatalf("got %d lines, want %d", len(s.Lines), n)
		}
		for i := range lines {
			if !bytes.Equal(s.Lines[i], lines[i]) {
				t.Fatalf("line %d: %q", i, s.Lines[i])
			}
		}
		name := tr.Name()
		ni, ok := ParseName(name)
		if !ok || !ni.Matches(&tr) {
			t.Fatalf("name %q parses to %+v", name, ni)
		}
	}
}

func TestCompactedHeader(t *testing.T) {
	c := newCodec(t)
	data, _, err := c.Encode(Header{Writer: testWriter, Seq: 9, Base: 2, Flags: FlagCompacted}, sampleLines(2))
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Decode(data)
	if err != nil || s.Base != 2 || s.Flags != FlagCompacted {
		t.Fatalf("%+v %v", s, err)
	}
	if _, _, err := c.Encode(Header{Writer: "ABCDEFGHIJKLMNOPQRST", Seq: 1}, nil); err == nil {
		t.Fatal("an uppercase writer id was accepted")
	}
	if _, _, err := c.Encode(Header{Writer: testWriter, Seq: 1}, [][]byte{[]byte("a\nb")}); err == nil {
		t.Fatal("a line holding a newline was accepted")
	}
}

func code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return fmt.Sprint(err)
}

// Every truncation and every single-byte change is refused as corrupt: the
// checksum covers every byte but itself, and the trailer's own magic.
func TestTornAndAltered(t *testing.T) {
	c := newCodec(t)
	data, _, err := c.Encode(Header{Writer: testWriter, Seq: 1}, sampleLines(20))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n++ {
		if _, err := c.Decode(data[:n]); err == nil {
			t.Fatalf("a segment cut to %d of %d bytes decoded", n, len(data))
		}
	}
	if _, err := c.Decode(append(bytes.Clone(data), 0)); err == nil {
		t.Fatal("a segment with an extra byte decoded")
	}
	for i := range data {
		d := bytes.Clone(data)
		d[i] ^= 0x40
		if _, err := c.Decode(d); err == nil {
			t.Fatalf("a segment with byte %d changed decoded", i)
		}
	}
}

func TestBadClaims(t *testing.T) {
	c, err := NewCodec(Limits{MaxRaw: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	big := newCodec(t)
	data, _, err := big.Encode(Header{Writer: testWriter, Seq: 1}, sampleLines(100))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Decode(data); code(err) != "segment/too-big" {
		t.Fatalf("over the limit: %v", err)
	}
	// A trailer that lies about rawLen, with a valid checksum.
	forged := reseal(t, data, func(tr []byte) { tr[WriterLen+20+7] ^= 1 })
	if _, err := big.Decode(forged); code(err) != "segment/length" {
		t.Fatalf("lying rawLen: %v", err)
	}
	forged = reseal(t, data, func(tr []byte) { tr[WriterLen+16+3]++ })
	if _, err := big.Decode(forged); code(err) != "segment/count" {
		t.Fatalf("lying count: %v", err)
	}
	forged = reseal(t, data, func(tr []byte) { tr[WriterLen+7] = 0; tr[WriterLen+15] = 0 })
	if _, err := big.Decode(forged); code(err) != "segment/seq" {
		t.Fatalf("seq 0: %v", err)
	}
}

// reseal changes a trailer field and recomputes the checksum, as a writer
// that means harm could.
func reseal(t *testing.T, data []byte, change func(tr []byte)) []byte {
	t.Helper()
	d := bytes.Clone(data)
	tr := d[len(d)-TrailerSize:]
	change(tr)
	sum := sha256Sum(d[:len(d)-36])
	copy(tr[TrailerSize-36:], sum[:])
	return d
}

func TestNames(t *testing.T) {
	w, err := NewWriterID(rand.Reader)
	if err != nil || !ValidWriterID(w) {
		t.Fatalf("%q %v", w, err)
	}
	good := Prefix + testWriter + "/000000000042-0123456789abcdef0123456789abcdef.seg"
	if n, ok := ParseName(good); !ok || n.Seq != 42 || n.Writer != testWriter {
		t.Fatalf("%+v %v", n, ok)
	}
	bad := []string{
		strings.Replace(good, ".seg", " (conflicted copy 2026-01-01).seg", 1),
		strings.Replace(good, ".seg", " 2.seg", 1),
		strings.Replace(good, "0123", "0A23", 1),
		strings.Replace(good, "000000000042", "000000000000", 1),
		strings.Replace(good, "000000000042", "00000000004x", 1),
		strings.Replace(good, testWriter, "ABCDEFGHIJKLMNOPQRST", 1),
		strings.Replace(good, ".seg", ".sync-conflict-20260101-101010-ABCDEFG.seg", 1),
		good + ".tmp",
		"segments/" + testWriter + "/.syncthing.000000000042-0123456789abcdef0123456789abcdef.seg.tmp",
	}
	for _, b := range bad {
		if _, ok := ParseName(b); ok {
			t.Errorf("ParseName accepted %q", b)
		}
	}
}

// A flipped byte fails the checksum, but the trailer's claims can still be
// peeked to name the damage; a truncated segment has none.
func TestPeekTrailer(t *testing.T) {
	c, err := NewCodec(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, tr, err := c.Encode(Header{Writer: testWriter, Seq: 7}, sampleLines(5))
	if err != nil {
		t.Fatal(err)
	}
	bad := append([]byte(nil), d...)
	bad[HeaderSize+3] ^= 0x40
	var se *Error
	if _, err := ReadTrailer(bad); !errors.As(err, &se) || se.Code != "segment/checksum" {
		t.Fatalf("a flipped byte: %v", err)
	}
	pt, ok := PeekTrailer(bad)
	if !ok || pt.Count != 5 || pt.Seq != 7 || pt.Writer != tr.Writer {
		t.Fatalf("peek: %+v %v", pt, ok)
	}
	for _, cut := range [][]byte{d[:len(d)-1], d[:HeaderSize+TrailerSize-1], append(append([]byte{}, d...), 0)} {
		if _, ok := PeekTrailer(cut); ok {
			t.Fatalf("peeked a trailer in %d bytes of a %d-byte segment", len(cut), len(d))
		}
	}
}
