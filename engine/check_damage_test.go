package engine_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// Check names each kind of damage to a version's value or to an index of
// it: one entry removed, replaced or added, each in a sound store of its
// own, is found and named with the version it concerns.
func TestCheckNamesEachDamage(t *testing.T) {
	ctx := context.Background()
	vs := enginetest.CorpusVersions(t, enginetest.SpaceID("check damage"), enginetest.CorpusOptions{Versions: 600, Seed: 9})
	digest := func(v *record.Version) [32]byte {
		d, ok := keys.ParseExact(v.ID)
		if !ok {
			t.Fatalf("id %s", v.ID)
		}
		return d
	}
	// firstKey returns the first key of a table.
	firstKey := func(kv engine.KV, prefix byte) []byte {
		it, err := kv.NewIter([]byte{prefix}, []byte{prefix + 1})
		if err != nil {
			t.Fatal(err)
		}
		defer it.Close()
		if !it.Next() {
			t.Fatalf("table %c is empty", prefix)
		}
		return append([]byte(nil), it.Key()...)
	}
	get := func(kv engine.KV, k []byte) []byte {
		b, err := kv.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte(nil), b...)
	}
	type damage struct {
		name string
		// do damages the store through b and returns the texts the
		// problems must hold, one problem each.
		do func(kv engine.KV, b engine.Batch) []string
	}
	// layout17 names the damages done to a store made a layout 17 one
	// first (its records' history entries under their keys): those of
	// such entries alone.
	layout17 := map[string]bool{"history entry of no version": true, "history key of neither form": true}
	// histKey is the key of v's history entry at seq, naming vseq, where
	// the store keeps its record's.
	histKey := func(kv engine.KV, v *record.Version, seq int64, vseq uint64) []byte {
		k, err := engine.HistKey(kv, v.Space, v.Key, seq, vseq)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	v := func(i int) *record.Version { return vs[i] }
	// pick returns a version from the 40th on, and its vseq, that is its
	// record's current version (its value in 'c', its 'v' the one byte
	// 0) or, current false, is not.
	pick := func(kv engine.KV, current bool) (*record.Version, uint64) {
		for _, x := range vs[40:] {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(x))))
			vb := get(kv, keys.VersionKey(vseq))
			if (len(vb) == 1 && vb[0] == 0) == current {
				return x, vseq
			}
		}
		t.Fatalf("no version with current %v", current)
		return nil, 0
	}
	cases := []damage{
		{"current version's value removed", func(kv engine.KV, b engine.Batch) []string {
			x, vseq := pick(kv, true)
			b.Delete(keys.CurrentKey(vseq))
			return []string{fmt.Sprintf("version %s: damaged: version value %d: its value is not among the current versions'", x.ID, vseq)}
		}},
		{"current version's value of no version", func(kv engine.KV, b engine.Batch) []string {
			_, vseq := pick(kv, false)
			b.Set(keys.CurrentKey(vseq), get(kv, keys.VersionKey(vseq)))
			return []string{fmt.Sprintf("current version value %d: no version value marks it", vseq)}
		}},
		{"current version's value key damaged", func(kv engine.KV, b engine.Batch) []string {
			b.Set([]byte{keys.Current, 1, 2}, []byte{1, 'x'})
			return []string{"current version value key 630102: bad length"}
		}},
		{"a superseded version's value among the current versions'", func(kv engine.KV, b engine.Batch) []string {
			x, vseq := pick(kv, false)
			b.Set(keys.CurrentKey(vseq), get(kv, keys.VersionKey(vseq)))
			b.Set(keys.VersionKey(vseq), []byte{0})
			return []string{fmt.Sprintf("version %s: its value is in the current versions' table, and it is not its record's current version", x.ID)}
		}},
		{"a current version's value in 'v'", func(kv engine.KV, b engine.Batch) []string {
			x, vseq := pick(kv, true)
			b.Set(keys.VersionKey(vseq), get(kv, keys.CurrentKey(vseq)))
			b.Delete(keys.CurrentKey(vseq))
			return []string{fmt.Sprintf("record %q: its head and the current versions' table disagree on where its current version's value is", x.Key)}
		}},
		{"sync order entry removed", func(kv engine.KV, b engine.Batch) []string {
			d := digest(v(11))
			b.Delete(keys.OrderKey(v(11).Space, record.UnixMillis(v(11).CreatedAt), d))
			return []string{fmt.Sprintf("version %s: missing from the sync order", v(11).ID)}
		}},
		{"history entry removed", func(kv engine.KV, b engine.Batch) []string {
			b.Delete(histKey(kv, v(12), v(12).Seq, decodeVseq(t, get(kv, keys.IDKey(digest(v(12)))))))
			return []string{fmt.Sprintf("version %s: no history entry in record %s", v(12).ID, v(12).Key)}
		}},
		{"line place removed", func(kv engine.KV, b engine.Batch) []string {
			b.Delete(keys.LinePlace(v(13).Space, v(13).Author, v(13).Collection, v(13).Log.N))
			return []string{fmt.Sprintf("version %s: missing from its writer's line", v(13).ID)}
		}},
		{"id entry removed", func(kv engine.KV, b engine.Batch) []string {
			vseq := get(kv, keys.IDKey(digest(v(14))))
			b.Delete(keys.IDKey(digest(v(14))))
			return []string{fmt.Sprintf("version value %d: no id names it", decodeVseq(t, vseq))}
		}},
		{"value removed", func(kv engine.KV, b engine.Batch) []string {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(15)))))
			b.Delete(keys.VersionKey(vseq))
			return []string{fmt.Sprintf("version %s: no value at %d", v(15).ID, vseq)}
		}},
		{"value garbled", func(kv engine.KV, b engine.Batch) []string {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(16)))))
			b.Set(keys.VersionKey(vseq), []byte("\x00not a version"))
			return []string{fmt.Sprintf("version %s: ", v(16).ID)}
		}},
		{"id entry names another version's value", func(kv engine.KV, b engine.Batch) []string {
			other := get(kv, keys.IDKey(digest(v(18))))
			b.Set(keys.IDKey(digest(v(17))), other)
			return []string{
				fmt.Sprintf("version %s: stored under another id's digest (%s)", v(18).ID, v(17).ID),
				fmt.Sprintf("version value %d: more than one id names it", decodeVseq(t, other)),
			}
		}},
		{"value of another version", func(kv engine.KV, b engine.Batch) []string {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(19)))))
			b.Set(keys.VersionKey(vseq), get(kv, keys.VersionKey(decodeVseq(t, get(kv, keys.IDKey(digest(v(20))))))))
			return []string{fmt.Sprintf("version %s: stored under another id's digest (%s)", v(20).ID, v(19).ID)}
		}},
		{"held and waiting", func(kv engine.KV, b engine.Batch) []string {
			b.Set(keys.WaitKey(digest(v(21))), []byte("x"))
			return []string{fmt.Sprintf("version %s: both held and waiting", v(21).ID)}
		}},
		{"head removed", func(kv engine.KV, b engine.Batch) []string {
			b.Delete(keys.HeadKey(keys.Rec(v(22).Space, v(22).Key)))
			return []string{fmt.Sprintf("record %q: no head", v(22).Key)}
		}},
		{"sync order entry of no version", func(kv engine.KV, b engine.Batch) []string {
			var d [32]byte
			d[0] = 7
			b.Set(keys.OrderKey(v(23).Space, 5, d), []byte(v(23).Collection))
			return []string{"sync order entry ", ": no version"}
		}},
		{"sync order entry moved", func(kv engine.KV, b engine.Batch) []string {
			d := digest(v(24))
			b.Delete(keys.OrderKey(v(24).Space, record.UnixMillis(v(24).CreatedAt), d))
			b.Set(keys.OrderKey(v(24).Space, 5, d), []byte(v(24).Collection))
			return []string{
				fmt.Sprintf("version %s: missing from the sync order", v(24).ID),
				fmt.Sprintf("sync order entry %s: does not match the version", v(24).ID),
			}
		}},
		{"sync order entry of another collection", func(kv engine.KV, b engine.Batch) []string {
			d := digest(v(25))
			b.Set(keys.OrderKey(v(25).Space, record.UnixMillis(v(25).CreatedAt), d), []byte("elsewhere"))
			return []string{fmt.Sprintf("sync order entry %s: does not match the version", v(25).ID)}
		}},
		{"line place of no version", func(kv engine.KV, b engine.Batch) []string {
			var d [32]byte
			d[0] = 9
			b.Set(keys.LinePlace(v(26).Space, v(26).Author, v(26).Collection, 1<<40), d[:])
			return []string{"line entry ", ": no version"}
		}},
		{"line place naming no version value", func(kv engine.KV, b engine.Batch) []string {
			b.Set(keys.LinePlace(v(30).Space, v(30).Author, v(30).Collection, 1<<40), keys.PlaceValue([]uint64{1 << 40}))
			return []string{fmt.Sprintf("line entry at %d: no version", uint64(1<<40))}
		}},
		{"line place of neither form", func(kv engine.KV, b engine.Batch) []string {
			// A vseq 0, which names no version and is no padding here.
			b.Set(keys.LinePlace(v(31).Space, v(31).Author, v(31).Collection, 1<<40), []byte{5, 0, 7})
			return []string{"line entry ", ": bad value"}
		}},
		{"line place without its version", func(kv engine.KV, b engine.Batch) []string {
			// The place names another version by vseq instead.
			other := decodeVseq(t, get(kv, keys.IDKey(digest(v(33)))))
			b.Set(keys.LinePlace(v(32).Space, v(32).Author, v(32).Collection, v(32).Log.N), keys.PlaceValue([]uint64{other}))
			return []string{fmt.Sprintf("version %s: missing from its writer's line", v(32).ID)}
		}},
		{"change log entry naming no version value", func(kv engine.KV, b engine.Batch) []string {
			// One run from "" of one change: vseq 1<<40, Stored, no facts.
			val := binary.AppendUvarint([]byte{0, 1}, 1<<40)
			b.Set(append(keys.ChangeKey(1<<30), 3), append(val, 1, 0))
			return []string{fmt.Sprintf("version value %d not held", uint64(1<<40))}
		}},
		{"change log entry by vseq naming vseq 0", func(kv engine.KV, b engine.Batch) []string {
			b.Set(append(keys.ChangeKey(1<<30), 3), []byte{0, 1, 0, 1, 0})
			return []string{"change log entry ", "damaged"}
		}},
		{"root index entry removed", func(kv engine.KV, b engine.Batch) []string {
			b.Delete(firstKey(kv, keys.Root))
			return []string{"root index: "}
		}},
		{"root index entry of no version value", func(kv engine.KV, b engine.Batch) []string {
			b.Set(keys.RootKey(v(28).Space, v(28).Author, 1<<40), nil)
			return []string{fmt.Sprintf("root index entry at %d: no version", uint64(1<<40))}
		}},
		{"root index entry of no id, as layouts before 12 kept it", func(kv engine.KV, b engine.Batch) []string {
			d, ok := keys.ParseExact(v(29).ID)
			if !ok {
				return []string{"cannot read the id"}
			}
			d[5] ^= 1
			b.Set(keys.RootDigestKey(v(29).Space, v(29).Author, d), nil)
			return []string{fmt.Sprintf("root index entry %s: no version", d)}
		}},
		{"root index key damaged", func(kv engine.KV, b engine.Batch) []string {
			k := firstKey(kv, keys.Root)
			b.Delete(k)
			b.Set(append(k[:keys.RootPrefixLen:keys.RootPrefixLen], 0xff, 0xff), nil)
			return []string{"root index key ", ": neither a version value's place nor an id"}
		}},
		{"history entry of no version", func(kv engine.KV, b engine.Batch) []string {
			// Another digest, one bit apart: an id no version has. (A
			// letter of the text replaced could be the multibase prefix or
			// a final letter with padding bits: no id at all.)
			d, ok := keys.ParseExact(v(27).ID)
			if !ok {
				return []string{"cannot read the id"}
			}
			d[5] ^= 1
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(27)))))
			b.Set(keys.HistoryIDKey(keys.Rec(v(27).Space, v(27).Key), 99, d.String()), get(kv, keys.HistoryKey(keys.Rec(v(27).Space, v(27).Key), v(27).Seq, vseq)))
			return []string{fmt.Sprintf("history entry %s: no version", d)}
		}},
		{"history entry naming no version value", func(kv engine.KV, b engine.Batch) []string {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(34)))))
			b.Set(histKey(kv, v(34), 99, 1<<40), get(kv, histKey(kv, v(34), v(34).Seq, vseq)))
			return []string{fmt.Sprintf("history entry at %d: no version", uint64(1<<40))}
		}},
		{"history entry by vseq filed under another seq", func(kv engine.KV, b engine.Batch) []string {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(35)))))
			k := histKey(kv, v(35), v(35).Seq, vseq)
			b.Set(histKey(kv, v(35), v(35).Seq+1000, vseq), get(kv, k))
			b.Delete(k)
			return []string{
				fmt.Sprintf("history entry %s: filed under another record or seq", v(35).ID),
				fmt.Sprintf("version %s: no history entry in record %s", v(35).ID, v(35).Key),
			}
		}},
		{"history key of neither form", func(kv engine.KV, b engine.Batch) []string {
			// A uvarint cut short: neither a vseq nor an id's text.
			k := append(keys.HistoryKey(keys.Rec(v(36).Space, v(36).Key), 99, 1)[:1+keys.SpaceLen+len(v(36).Key)+1+8], 0x80, 0x80)
			b.Set(k, []byte{byte(engine.Stands), 0})
			return []string{"history key ", ": neither a version value's place nor an id"}
		}},
		{"history key by number of neither form", func(kv engine.KV, b engine.Batch) []string {
			// A uvarint cut short after the number and order.
			k := histKey(kv, v(36), 99, 1)
			b.Set(append(k[:len(k)-1], 0x80, 0x80), []byte{byte(engine.Stands), 0})
			return []string{"history key ", ": neither a version value's place nor an id"}
		}},
		{"history entry under a number no head names", func(kv engine.KV, b engine.Batch) []string {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(37)))))
			b.Set(keys.HistNumKey(1<<30, v(37).Seq, vseq), get(kv, histKey(kv, v(37), v(37).Seq, vseq)))
			return []string{fmt.Sprintf("history entry %s: its record number %d names no record", v(37).ID, 1<<30)}
		}},
		{"history entry under its record's key, its head naming a number", func(kv engine.KV, b engine.Batch) []string {
			vseq := decodeVseq(t, get(kv, keys.IDKey(digest(v(38)))))
			b.Set(keys.HistoryKey(keys.Rec(v(38).Space, v(38).Key), v(38).Seq, vseq), get(kv, histKey(kv, v(38), v(38).Seq, vseq)))
			return []string{fmt.Sprintf("history entry %s: under its record's key, where its record's head names a number", v(38).ID)}
		}},
	}
	// A head naming another number than its entries' is done after the
	// batch (the head is rewritten whole): a number no record has, or
	// another record's.
	numbered := []struct {
		name string
		to   func(kv engine.KV, was uint64) uint64
		want func(was, to uint64) []string
	}{
		{"head naming a number no entries have", func(kv engine.KV, was uint64) uint64 { return 1 << 20 }, func(was, to uint64) []string {
			return []string{
				fmt.Sprintf("record %q: its head names number %d, its history entries %d", v(39).Key, to, was),
				fmt.Sprintf("record %q: its number %d is past the last one given", v(39).Key, to),
				fmt.Sprintf("record head %q: no history", v(39).Key),
				fmt.Sprintf("its record number %d names no record", was),
			}
		}},
		{"head naming another record's number", func(kv engine.KV, was uint64) uint64 {
			other, err := engine.RecNum(kv, v(0).Space, v(0).Key)
			if err != nil || other == was {
				t.Fatalf("record %q: number %d (%v), want another than %d", v(0).Key, other, err, was)
			}
			return other
		}, func(was, to uint64) []string {
			return []string{
				fmt.Sprintf("its number %d is record", to),
				fmt.Sprintf("its record number %d names no record", was),
			}
		}},
	}
	for _, c := range numbered {
		cases = append(cases, damage{name: c.name, do: func(kv engine.KV, b engine.Batch) []string {
			was, err := engine.RecNum(kv, v(39).Space, v(39).Key)
			if err != nil || was == 0 {
				t.Fatalf("record %q: number %d (%v)", v(39).Key, was, err)
			}
			to := c.to(kv, was)
			if err := engine.SetRecNum(kv, v(39).Space, v(39).Key, to); err != nil {
				t.Fatal(err)
			}
			return c.want(was, to)
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv := keepKV{memory.Open(nil)}
			s, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Admit(ctx, "p", vs); err != nil {
				t.Fatal(err)
			}
			if layout17[c.name] {
				s.Close()
				if err := engine.Layout17(kv, 17); err != nil {
					t.Fatal(err)
				}
				if s, err = engine.Open(kv, &engine.Options{Judge: &judge.Judge{}}); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
			}
			if probs, err := s.Check(ctx, nil); err != nil || len(probs) > 0 {
				t.Fatalf("check of a sound store: %v %v", probs, err)
			}
			b, err := kv.NewBatch()
			if err != nil {
				t.Fatal(err)
			}
			want := c.do(kv, b)
			if err := b.Commit(engine.Sync); err != nil {
				t.Fatal(err)
			}
			got, err := s.Check(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				found := false
				for _, p := range got {
					if strings.Contains(p, w) {
						found = true
					}
				}
				if !found {
					t.Errorf("check found\n%q\nnone holding %q", got, w)
				}
			}
		})
	}
}

// decodeVseq reads an id entry's value: the 8-byte number of its value.
func decodeVseq(t *testing.T, b []byte) uint64 {
	if len(b) != 8 {
		t.Fatalf("id entry value %x", b)
	}
	return binary.BigEndian.Uint64(b)
}
