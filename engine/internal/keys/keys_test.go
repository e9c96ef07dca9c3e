package keys

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// ParseExact takes an id only in its canonical text: the one ID.String
// makes.
func TestParseExact(t *testing.T) {
	d := canonical.IDOf([]byte("x"))
	id := d.String()
	if got, ok := ParseExact(id); !ok || got != d {
		t.Fatalf("canonical text refused: %v", ok)
	}
	last := id[len(id)-1]
	bad := []string{
		"", id[:len(id)-1], id + "a", "B" + id[1:], strings.ToUpper(id), id[:5] + strings.ToUpper(id[5:6]) + id[6:],
		"c" + id[1:], id[:len(id)-1] + "1",
	}
	// The last character carries padding bits: the next value up has one
	// set, unless the text already ends in the last value.
	if last != '7' {
		next := last + 1
		if last == 'z' {
			next = '2'
		}
		bad = append(bad, id[:len(id)-1]+string(next))
	}
	for _, s := range bad {
		if _, ok := ParseExact(s); ok {
			t.Errorf("%q taken", s)
		}
		if d, err := canonical.ParseID(s); err == nil && d.String() == s {
			t.Errorf("%q is canonical after all", s)
		}
	}
}

func BenchmarkParseExact(b *testing.B) {
	id := canonical.IDOf([]byte("x")).String()
	for range b.N {
		ParseExact(id)
	}
}

// An index-by-root key reads back as the version it names, in either form,
// and a key of neither form is no entry.
func TestRootEntry(t *testing.T) {
	var d canonical.ID
	d[0], d[31] = 7, 9
	for _, vseq := range []uint64{0, 1, 127, 128, 1 << 20, 1<<64 - 1} {
		got, _, byVseq, ok := RootEntry(RootKey("s", "did:key:z", vseq))
		if !ok || !byVseq || got != vseq {
			t.Fatalf("vseq %d read as %d %v %v", vseq, got, byVseq, ok)
		}
	}
	_, got, byVseq, ok := RootEntry(RootDigestKey("s", "did:key:z", d))
	if !ok || byVseq || got != d {
		t.Fatalf("digest read as %x %v %v", got, byVseq, ok)
	}
	p := RootPrefix("s", "did:key:z")
	for _, bad := range [][]byte{
		p,                                     // nothing after the prefix
		append(p[:len(p):len(p)], 0x80, 0x00), // 0, not in its shortest form
		append(p[:len(p):len(p)], 0x05, 0x05), // a uvarint and a byte more
		append(p[:len(p):len(p)], make([]byte, 31)...),
		p[:len(p)-1],
	} {
		if _, _, _, ok := RootEntry(bad); ok {
			t.Fatalf("key %x read as an entry", bad)
		}
	}
}

// A line place's value reads back as the vseqs it names, whatever their
// count (padded where it would be as long as a list of digests), a list
// of digests reads as digests, and a value of neither form is no place.
func TestPlaceValue(t *testing.T) {
	for n := 1; n <= 70; n++ {
		vseqs := make([]uint64, n)
		for i := range vseqs {
			vseqs[i] = uint64(1 + i*(1+i%3)*97) // one and two bytes each
		}
		b := PlaceValue(vseqs)
		if len(b)%32 == 0 {
			t.Fatalf("%d vseqs: a value of %d bytes", n, len(b))
		}
		got, ds, byVseq, ok := ReadPlace(b)
		if !ok || !byVseq || ds != nil || !slices.Equal(got, vseqs) {
			t.Fatalf("%d vseqs %v read as %v %v %v", n, vseqs, got, byVseq, ok)
		}
	}
	var d [64]byte
	d[0], d[40] = 7, 9
	_, ds, byVseq, ok := ReadPlace(d[:])
	if !ok || byVseq || len(ds) != 2 || ds[0][0] != 7 || ds[1][8] != 9 {
		t.Fatalf("two digests read as %v %v %v", ds, byVseq, ok)
	}
	for _, bad := range [][]byte{
		nil,
		{0},                                     // padding alone
		{5, 0, 7},                               // a vseq 0 inside
		{5, 0},                                  // a 0 that pads nothing
		{0x80},                                  // cut short
		{0x80, 0x00},                            // 0, not in its shortest form
		{0x81, 0x00},                            // 1, not in its shortest form
		append(make([]byte, 31), 1)[:32:32][1:], // 31 bytes: thirty 0s and a 1
	} {
		if _, _, _, ok := ReadPlace(bad); ok {
			t.Fatalf("value %x read as a place", bad)
		}
	}
}

func TestShortUvarint(t *testing.T) {
	for _, v := range []uint64{0, 1, 127, 128, 300, 1 << 35, 1<<64 - 1} {
		b := binary.AppendUvarint(nil, v)
		got, n := ShortUvarint(append(b, 0xff))
		if got != v || n != len(b) {
			t.Errorf("ShortUvarint(%x ff) = %d, %d; want %d, %d", b, got, n, v, len(b))
		}
	}
	for _, b := range [][]byte{
		nil,                            // nothing
		{0x80},                         // cut short
		{0x80, 0x00},                   // 0 in two bytes
		{0xff, 0x00},                   // 127 in two bytes
		{0x80, 0x81, 0x00},             // 128 in three bytes
		bytes.Repeat([]byte{0xff}, 11), // longer than any uvarint
	} {
		if v, n := ShortUvarint(b); n != 0 || v != 0 {
			t.Errorf("ShortUvarint(%x) = %d, %d; want 0, 0", b, v, n)
		}
	}
}

// A history key is read back in either form, by vseq (layout 15 on) or by
// the id's text (before), with its record and seq; a key of neither form,
// or cut short, is refused; no history key ends in 0x00 as a head's does.
func TestHistoryEntry(t *testing.T) {
	rec := Rec("space", "a/key")
	d := canonical.IDOf([]byte("x"))
	for _, vseq := range []uint64{1, 127, 128, 1 << 20, 1<<64 - 1} {
		k := HistoryKey(rec, 42, vseq)
		e, ok := HistoryEntry(k)
		if !ok || !e.ByVseq || e.Vseq != vseq || e.Seq != 42 || !bytes.Equal(e.Rec, rec) {
			t.Fatalf("vseq %d: %+v %v", vseq, e, ok)
		}
		if IsHead(k) {
			t.Fatalf("vseq %d: the key reads as a head", vseq)
		}
	}
	e, ok := HistoryEntry(HistoryIDKey(rec, 1<<53-1, d.String()))
	if !ok || e.ByVseq || e.D != d || e.ID != d.String() || e.Seq != 1<<53-1 || !bytes.Equal(e.Rec, rec) {
		t.Fatalf("by id: %+v %v", e, ok)
	}
	k := HistoryKey(rec, 7, 300)
	for name, bad := range map[string][]byte{
		"vseq 0":            HistoryKey(rec, 7, 0),
		"uvarint cut short": k[:len(k)-1],
		"uvarint too long":  append(append([]byte(nil), k[:len(k)-2]...), 0xac, 0x82, 0x00),
		"no vseq":           k[:len(k)-2],
		"id text not exact": HistoryIDKey(rec, 7, strings.ToUpper(d.String())),
		"another table":     append([]byte{Line}, k[1:]...),
		"no record's end":   append([]byte{History}, make([]byte, 5)...),
		"order past 2^53−1": append(append(append([]byte{History}, rec...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 1),
	} {
		if e, ok := HistoryEntry(bad); ok {
			t.Errorf("%s: read as %+v", name, e)
		}
	}
}

// A record number reads back as written, byte order is numeric order
// (so a store's records' entries come in the order they were numbered),
// and bytes of no number are refused.
func TestRecNum(t *testing.T) {
	nums := []uint64{1, 2, 255, 256, 300, 65535, 65536, 1<<24 - 1, 1 << 24, 1 << 40, 1<<56 - 1, 1 << 56, 1<<64 - 1}
	var last []byte
	for _, n := range nums {
		b := AppendRecNum(nil, n)
		got, used := ReadRecNum(append(b, 7, 7))
		if got != n || used != len(b) {
			t.Fatalf("%d: wrote %x, read %d (%d bytes)", n, b, got, used)
		}
		if last != nil && bytes.Compare(last, b) >= 0 {
			t.Fatalf("%d: %x does not sort after %x", n, b, last)
		}
		last = b
		k := HistNumKey(n, 3, 300)
		e, ok := HistoryEntry(k)
		if !ok || e.Num != n || e.Rec != nil || !e.ByVseq || e.Vseq != 300 || e.Seq != 3 {
			t.Fatalf("%d: history key %x read as %+v %v", n, k, e, ok)
		}
		if !bytes.HasPrefix(k, HistNumPrefix(n)) || bytes.HasPrefix(k, HistNumPrefix(n+1)) {
			t.Fatalf("%d: key %x and the record's prefix", n, k)
		}
	}
	if b := AppendRecNum(nil, 300); !bytes.Equal(b, []byte{2, 1, 0x2c}) {
		t.Fatalf("300 written %x", b)
	}
	for name, bad := range map[string][]byte{
		"empty":        nil,
		"length 0":     {0, 1},
		"length 9":     {9, 1, 1, 1, 1, 1, 1, 1, 1, 1},
		"cut short":    {3, 1, 2},
		"leading zero": {2, 0, 5},
		"zero":         {1, 0},
	} {
		if n, used := ReadRecNum(bad); used != 0 {
			t.Errorf("%s: read %d", name, n)
		}
	}
	k := HistNumKey(5, 7, 300)
	for name, bad := range map[string][]byte{
		"vseq 0":            HistNumKey(5, 7, 0),
		"uvarint cut short": k[:len(k)-1],
		"no order":          k[:4],
		"number cut short":  {HistNum, 3, 1},
	} {
		if e, ok := HistoryEntry(bad); ok {
			t.Errorf("%s: read as %+v", name, e)
		}
	}
}

// LinePlaces is LinePlace for each place, in order, each key its own.
func TestLinePlaces(t *testing.T) {
	ns := []int64{0, 1, 7, 1 << 40, 3}
	ks := LinePlaces("space", "did:key:zA", "app.chat", ns)
	if len(ks) != len(ns) {
		t.Fatalf("%d keys for %d places", len(ks), len(ns))
	}
	for i, n := range ns {
		if want := LinePlace("space", "did:key:zA", "app.chat", n); !bytes.Equal(ks[i], want) {
			t.Fatalf("place %d: %x, want %x", n, ks[i], want)
		}
	}
	ks[0] = append(ks[0], 'x') // capped: growing one never writes over the next
	if !bytes.Equal(ks[1], LinePlace("space", "did:key:zA", "app.chat", 1)) {
		t.Fatal("a key grown wrote over the next")
	}
	if bytes.Equal(LinePlaces("space", "did:key:zB", "app.chat", ns[:1])[0], LinePlaces("space", "did:key:zA", "app.chat", ns[:1])[0]) {
		t.Fatal("two authors' lines share a key")
	}
}

// The forms given a space's tag make the keys the forms given the space
// make, and a rec gives back the tag it was made with, for a space that is
// an id and one that is not.
func TestKeysByTag(t *testing.T) {
	d := canonical.IDOf([]byte("a space"))
	for _, space := range []string{d.String(), "not an id"} {
		tag := SpaceTag(space)
		rec := Rec(space, "k")
		if RecTag(rec) != tag || !bytes.Equal(rec, AppendRec(nil, tag, "k")) || len(rec) != RecLen("k") {
			t.Errorf("%q: rec %x, its tag %x, want %x", space, rec, RecTag(rec), tag)
		}
		if got, want := AppendLinePlaceTag(nil, tag, "did:key:zA", "app.chat", 9), LinePlace(space, "did:key:zA", "app.chat", 9); !bytes.Equal(got, want) {
			t.Errorf("%q: line place %x, want %x", space, got, want)
		}
		if got, want := AppendOrderKeyTag(nil, tag, 77, d), OrderKey(space, 77, d); !bytes.Equal(got, want) {
			t.Errorf("%q: order key %x, want %x", space, got, want)
		}
		if got, want := AppendRootKeyTag(nil, tag, "did:key:zR", 5), RootKey(space, "did:key:zR", 5); !bytes.Equal(got, want) {
			t.Errorf("%q: root key %x, want %x", space, got, want)
		}
	}
}
