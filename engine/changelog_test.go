package engine

import (
	"encoding/binary"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// An entry an earlier layout wrote (digest and kind per change, a 4-byte
// count a run, under 'g' seq alone) reads as its changes without facts;
// one this layout writes reads back with them.
func TestChangeEntryFormats(t *testing.T) {
	a, b, c := canonical.IDOf([]byte("a")), canonical.IDOf([]byte("b")), canonical.IDOf([]byte("c"))
	var old []byte
	for _, run := range []struct {
		from string
		ds   []canonical.ID
		kind ChangeKind
	}{{"blobs:x", []canonical.ID{a, b}, Stored}, {"", []canonical.ID{a}, Withdrew}} {
		old = binary.AppendUvarint(old, uint64(len(run.from)))
		old = append(old, run.from...)
		old = binary.BigEndian.AppendUint32(old, uint32(len(run.ds)))
		for _, d := range run.ds {
			old = append(append(old, d[:]...), byte(run.kind))
		}
	}
	last, cs, err := readChangeEntry([]byte("g\x00\x00\x00\x00\x00\x00\x00\x07"), old)
	if err != nil || last != 7 || len(cs) != 3 {
		t.Fatalf("earlier entry: %d %+v %v", last, cs, err)
	}
	if cs[0] != (Change{Seq: 5, ID: a, Kind: Stored, From: "blobs:x"}) || cs[2] != (Change{Seq: 7, ID: a, Kind: Withdrew}) {
		t.Fatalf("earlier entry: %+v", cs)
	}
	if _, _, err := readChangeEntry([]byte("g\x00\x00\x00\x00\x00\x00\x00\x07\x02"), old); err == nil {
		t.Fatal("an earlier entry read as this layout's")
	}

	var tx tx
	tx.change(c, Forked, "", nil, Stands, -1)
	tx.pend[0].other = b
	entry, err := tx.changeEntry()
	if err != nil {
		t.Fatal(err)
	}
	_, cs, err = readChangeEntry([]byte("g\x00\x00\x00\x00\x00\x00\x00\x01\x02"), entry)
	if err != nil || len(cs) != 1 || cs[0] != (Change{Seq: 1, ID: c, Kind: Forked, Facts: true, Verdict: Stands, Other: b}) {
		t.Fatalf("this layout's entry: %+v %v", cs, err)
	}
	for n := range len(entry) {
		if _, _, err := readChangeEntry([]byte("g\x00\x00\x00\x00\x00\x00\x00\x01\x02"), entry[:n]); err == nil {
			t.Fatalf("an entry cut at %d read", n)
		}
	}
}
