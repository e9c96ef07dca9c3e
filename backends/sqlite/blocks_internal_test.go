package sqlite

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/minca-go/minca/engine"
)

// blocksModel is what a store of blocks should read back: every key's
// value, written through batches of sets and deletes of versions' keys
// (in blocks, as rows over them, as tombstones) and of other keys.
type blocksModel map[string][]byte

func (m blocksModel) sorted() []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func vkey(n uint64) []byte { return binary.BigEndian.AppendUint64([]byte{'v'}, n) }

// lkey is the engine's key of place n of line line in space space: 'l',
// the space's 33-byte tag, the line's 32-byte tag, n (8 bytes).
func lkey(space, line int, n uint64) []byte {
	k := append([]byte{'l', 1}, bytes.Repeat([]byte{byte(0x40 + space)}, 32)...)
	k = append(k, bytes.Repeat([]byte{byte(0x60 + line)}, 32)...)
	return binary.BigEndian.AppendUint64(k, n)
}

// placeValue is a value like a place's: a vseq or a few, as uvarints.
func placeValue(r *rand.Rand) []byte {
	var v []byte
	for range 1 + r.IntN(2) {
		v = binary.AppendUvarint(v, 1+r.Uint64N(1<<20))
	}
	return v
}

// models is the spaces and lines TestBlocksReadBack writes places in.
const modelSpaces, modelLines = 2, 3

// modelValue is a value like a version's: repeated field names, random
// bytes, sometimes larger than a block holds.
func modelValue(r *rand.Rand) []byte {
	n := 20 + r.IntN(900)
	if r.IntN(25) == 0 {
		n = blockValueMax + 1 + r.IntN(8<<10)
	}
	b := fmt.Appendf(nil, `{"author":"a%d","space":"s","sig":"`, r.IntN(5))
	for len(b) < n {
		b = append(b, byte('a'+r.IntN(26)))
	}
	return b
}

// The rows and blocks of a store read back as one store, key by key
// (Get, GetMany) and in order both ways over random ranges, through
// fresh runs of versions and of lines' places, rewrites and deletes of
// single ones, blocks rewritten, keys between a span's that no block
// holds, the store reopened (its pending counts gone) and opened
// read-only.
func TestBlocksReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "store.db")
	r := rand.New(rand.NewPCG(3, 4))
	m := blocksModel{}
	kv, err := Open(path, &Options{TrainBytes: 8 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if kv.blocks == nil {
		t.Fatal("a new store is not a store of blocks")
	}
	next := uint64(1)
	var places [modelSpaces][modelLines]uint64 // the next place of each line
	for batch := range 60 {
		b, err := kv.NewBatch()
		if err != nil {
			t.Fatal(err)
		}
		set := func(k, v []byte) {
			b.Set(k, v)
			m[string(k)] = v
		}
		// A run of new versions, as an import's batch writes them.
		for range r.IntN(70) {
			set(vkey(next), modelValue(r))
			next++
		}
		for range r.IntN(30) {
			k := vkey(uint64(r.IntN(int(next) + 5)))
			switch r.IntN(4) {
			case 0:
				b.Delete(k)
				delete(m, string(k))
			default:
				set(k, modelValue(r))
			}
		}
		// Runs of places of a line or two, as an import writes them, and
		// places written again or deleted.
		for range r.IntN(3) {
			sp, ln := r.IntN(modelSpaces), r.IntN(modelLines)
			for range r.IntN(90) {
				set(lkey(sp, ln, places[sp][ln]), placeValue(r))
				places[sp][ln]++
			}
		}
		for range r.IntN(12) {
			sp, ln := r.IntN(modelSpaces), r.IntN(modelLines)
			k := lkey(sp, ln, r.Uint64N(places[sp][ln]+5))
			switch r.IntN(5) {
			case 0:
				b.Delete(k)
				delete(m, string(k))
			case 1:
				set(append(k, byte(r.IntN(3))), placeValue(r)) // a key between a span's: a row
			case 2:
				set(k, modelValue(r)) // some larger than a block holds
			default:
				set(k, placeValue(r))
			}
		}
		for range r.IntN(5) { // keys of other tables, and of 'v' but not a version's
			k := []byte(fmt.Sprintf("%c%d", "evw"[r.IntN(3)], r.IntN(50)))
			if r.IntN(3) == 0 {
				b.Delete(k)
				delete(m, string(k))
			} else {
				set(k, modelValue(r))
			}
		}
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
		if batch%10 == 9 {
			checkModel(t, kv, m, r, fmt.Sprintf("batch %d", batch))
		}
		if batch == 40 {
			if err := kv.Close(); err != nil {
				t.Fatal(err)
			}
			if kv, err = Open(path, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	var blocks, lineBlocks, tombstones, lineTombstones int
	if err := kv.db.QueryRow(`SELECT (SELECT count(*) FROM kvblk WHERE substr(k, 1, 1) = x'76'), (SELECT count(*) FROM kvblk WHERE substr(k, 1, 1) = x'6c'),
		(SELECT count(*) FROM `+kv.rows+` WHERE z = -1 AND substr(k, 1, 1) = x'76'), (SELECT count(*) FROM `+kv.rows+` WHERE z = -1 AND substr(k, 1, 1) = x'6c')`).Scan(
		&blocks, &lineBlocks, &tombstones, &lineTombstones); err != nil {
		t.Fatal(err)
	}
	var placed uint64
	for _, ls := range places {
		for _, n := range ls {
			placed += n
		}
	}
	if kv.rows != rowsLines || blocks < int(next)/blockSpan/2 || lineBlocks < int(placed)/blockSpan/2 || tombstones == 0 || lineTombstones == 0 {
		t.Fatalf("rows in %s, %d blocks for %d vseqs, %d for %d places, %d and %d tombstones: the test made too few",
			kv.rows, blocks, next, lineBlocks, placed, tombstones, lineTombstones)
	}
	if err := kv.Close(); err != nil {
		t.Fatal(err)
	}
	if kv, err = Open(path, &Options{ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	checkModel(t, kv, m, r, "read-only")
}

// randomKey is a key of the versions' table or of a line's places,
// held or not.
func randomKey(r *rand.Rand) []byte {
	if r.IntN(2) == 0 {
		return vkey(uint64(r.IntN(3000)))
	}
	return lkey(r.IntN(modelSpaces), r.IntN(modelLines), r.Uint64N(2000))
}

func checkModel(t *testing.T, kv *Store, m blocksModel, r *rand.Rand, when string) {
	t.Helper()
	ks := m.sorted()
	for _, k := range ks {
		v, err := kv.Get([]byte(k))
		if err != nil || !bytes.Equal(v, m[k]) {
			t.Fatalf("%s: Get %x: %d bytes, %v; want %d bytes", when, k, len(v), err, len(m[k]))
		}
	}
	// Every key asked for at once, with keys not held among them.
	ask := slices.Clone(ks)
	for range 100 {
		ask = append(ask, string(randomKey(r)))
	}
	slices.Sort(ask)
	ask = slices.Compact(ask)
	askB := make([][]byte, len(ask))
	for i, k := range ask {
		askB[i] = []byte(k)
	}
	got := map[string][]byte{}
	if err := kv.GetMany(askB, func(i int, v []byte) { got[ask[i]] = bytes.Clone(v) }); err != nil {
		t.Fatalf("%s: GetMany: %v", when, err)
	}
	for _, k := range ask {
		if want, ok := m[k]; ok != (got[k] != nil) || !bytes.Equal(got[k], want) {
			t.Fatalf("%s: GetMany %x: %d bytes (found %v), want %d (held %v)", when, k, len(got[k]), got[k] != nil, len(want), ok)
		}
		if _, err := kv.Get([]byte(k)); m[k] == nil && !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("%s: Get %x not held: %v", when, k, err)
		}
	}
	for i := range 12 {
		var lo, hi []byte
		if i > 0 {
			lo = randomKey(r)
			at := len(lo) - 8
			hi = binary.BigEndian.AppendUint64(bytes.Clone(lo[:at]), binary.BigEndian.Uint64(lo[at:])+uint64(r.IntN(200)))
			if i%4 == 0 {
				lo = lo[:1+r.IntN(len(lo))] // a bound that is no key of a block
			}
			if i%5 == 0 {
				hi = nil
			}
			if i%6 == 0 {
				hi = randomKey(r) // a range across tables, or none
			}
		}
		var want []string
		for _, k := range ks {
			if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
				want = append(want, k)
			}
		}
		for _, desc := range []bool{false, true} {
			var it engine.Iterator
			var err error
			if desc {
				it, err = kv.NewReverseIter(lo, hi)
			} else {
				it, err = kv.NewIter(lo, hi)
			}
			if err != nil {
				t.Fatal(err)
			}
			var seen []string
			for it.Next() {
				k := string(it.Key())
				if !bytes.Equal(it.Value(), m[k]) {
					t.Fatalf("%s: iterating [%x, %x) (descending %v): %x reads %d bytes, want %d", when, lo, hi, desc, k, len(it.Value()), len(m[k]))
				}
				seen = append(seen, k)
			}
			if err := errors.Join(it.Err(), it.Close()); err != nil {
				t.Fatal(err)
			}
			if desc {
				slices.Reverse(seen)
			}
			if !slices.Equal(seen, want) {
				t.Fatalf("%s: iterating [%x, %x) (descending %v): %d keys, want %d", when, lo, hi, desc, len(seen), len(want))
			}
		}
	}
}

// A block row, whatever its bytes, decodes to entries or to an error,
// never a panic, and entries that decode code back to the same entries.
func FuzzDecodeBlock(f *testing.F) {
	c, err := newBlockCodec()
	if err != nil {
		f.Fatal(err)
	}
	defer c.close()
	r := rand.New(rand.NewPCG(5, 6))
	var es []entry
	for i := range blockSpan {
		if r.IntN(3) > 0 {
			v := modelValue(r)
			es = append(es, entry{idx: i, v: v[:min(len(v), blockValueMax)]})
		}
	}
	f.Add(c.encode(es))
	f.Add(c.encode(es[:1]))
	f.Add([]byte{blockFormat})
	f.Fuzz(func(t *testing.T, row []byte) {
		b, err := c.decodeRow(row)
		if err != nil {
			if !errors.Is(err, errDamagedBlock) {
				t.Fatalf("an error not marked as damage: %v", err)
			}
			return
		}
		var again []entry
		for i := range blockSpan {
			if v, ok := b.get(i); ok {
				again = append(again, entry{idx: i, v: v})
			}
		}
		b2, err := c.decodeRow(c.encode(again))
		if err != nil {
			t.Fatal(err)
		}
		if b2.n != b.n || !bytes.Equal(b2.raw, b.raw) {
			t.Fatal("entries do not code back to themselves")
		}
	})
}

// Any key a store's families keep in a block is in the span of the block
// its key names, at its index, and that block's key is one of a block.
func FuzzBlockSpan(f *testing.F) {
	f.Add(vkey(77), uint8(famVersions))
	f.Add(append([]byte{'l', 0x80, 0}, make([]byte, lineRest)...), uint8(famVersions|famLines))
	f.Add(append([]byte{'l', 0x80, 0, 0}, make([]byte, lineRest)...), uint8(famVersions|famLines))
	f.Fuzz(func(t *testing.T, k []byte, fam uint8) {
		f := families(fam)
		idx, ok := f.span(k)
		if !ok {
			return
		}
		bk := blockOf(k)
		if i, ok := f.span(bk); !ok || i != 0 {
			t.Fatalf("key %x: its block %x is no block's key", k, bk)
		}
		if !sameBlock(bk, k) || !bytes.Equal(entryKey(bk, idx), k) {
			t.Fatalf("key %x is not entry %d of block %x", k, idx, bk)
		}
		if bytes.Compare(bk, k) > 0 || bytes.Compare(k, lastKey(bk)) > 0 {
			t.Fatalf("key %x outside its block's span %x to %x", k, bk, lastKey(bk))
		}
		if k[0] == 'l' && f&famLines == 0 || k[0] == 'v' && f&famVersions == 0 {
			t.Fatalf("key %x in a block of a table the families %b do not keep", k, f)
		}
	})
}
