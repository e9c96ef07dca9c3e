package enginetest

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// The KV's own contract, as the engine relies on it: a batch's last write
// of a key wins, nothing shows before Commit, and GetMany finds exactly
// the keys held, empty values included.
func (h *harness) testKV(t *testing.T) {
	kv := h.open(t)
	defer kv.Close()
	commit := func(f func(b engine.Batch)) {
		t.Helper()
		b, err := kv.NewBatch()
		if err != nil {
			t.Fatal(err)
		}
		f(b)
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
		b.Close()
	}
	key := func(i int) []byte { return []byte(fmt.Sprintf("k%04d", i)) }
	commit(func(b engine.Batch) {
		for i := 0; i < 600; i += 2 {
			b.Set(key(i), []byte(fmt.Sprint("v", i)))
		}
		b.Set([]byte("empty"), []byte{})
		b.Set([]byte("gone"), []byte("x"))
		b.Delete([]byte("gone"))
		b.Delete([]byte("back"))
		b.Set([]byte("back"), []byte("y"))
	})
	b, _ := kv.NewBatch()
	b.Set(key(1), []byte("uncommitted"))
	if _, err := kv.Get(key(1)); err == nil {
		t.Fatal("a batch's write shows before Commit")
	}
	b.Close()
	var ks [][]byte
	ks = append(ks, []byte("back"), []byte("empty"), []byte("gone"))
	for i := range 600 {
		ks = append(ks, key(i))
	}
	got := map[string]string{}
	if err := kv.GetMany(ks, func(i int, v []byte) { got[string(ks[i])] = string(v) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 302 || got["back"] != "y" || got["empty"] != "" || got[string(key(598))] != "v598" {
		t.Fatalf("GetMany found %d keys: back=%q empty=%q", len(got), got["back"], got["empty"])
	}
	if _, ok := got["gone"]; ok {
		t.Fatal("GetMany found a deleted key")
	}
	for i := range 600 {
		v, ok := got[string(key(i))]
		if ok != (i%2 == 0) || ok && v != fmt.Sprint("v", i) {
			t.Fatalf("GetMany: %s = %q, %v", key(i), v, ok)
		}
	}
	if v, err := kv.Get([]byte("empty")); err != nil || v == nil || len(v) != 0 {
		t.Fatalf("empty value read as %v, %v", v, err)
	}
	it, err := kv.NewIter(key(10), key(20))
	if err != nil {
		t.Fatal(err)
	}
	var seen [][]byte
	for it.Next() {
		seen = append(seen, bytes.Clone(it.Key()))
	}
	it.Close()
	if len(seen) != 5 || !bytes.Equal(seen[0], key(10)) || !bytes.Equal(seen[4], key(18)) {
		t.Fatalf("iterated %q", seen)
	}
}

// The change log reads the same from every point, whatever the batches
// were: each change after `after`, once, in order.
func (h *harness) testChangesAcrossBatches(t *testing.T) {
	sp := SpaceID("changes")
	vs := CorpusVersions(t, sp, CorpusOptions{Versions: 60, Seed: 9})
	s := h.store(t, nil)
	for i, n := 0, 1; i < len(vs); i, n = i+n, n+3 {
		admit(t, s, "p", vs[i:min(i+n, len(vs))]...)
	}
	var all []engine.Change
	for c, err := range s.Changes(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, c)
	}
	if len(all) != len(vs) {
		t.Fatalf("%d changes for %d versions", len(all), len(vs))
	}
	for after := range uint64(len(all) + 1) {
		k := int(after)
		for c, err := range s.Changes(ctx, after) {
			if err != nil {
				t.Fatal(err)
			}
			if k >= len(all) || c != all[k] || c.Seq != uint64(k+1) {
				t.Fatalf("changes after %d: %+v at %d", after, c, k)
			}
			k++
		}
		if k != len(all) {
			t.Fatalf("changes after %d stop at %d of %d", after, k, len(all))
		}
	}
	clean(t, s)
}

// Each change names the source it came from: the batch's, or for a
// version that waited (02 §9.5), the one it arrived from; a body added to
// a held stub, the source that brought the body. It reads the same from
// every point of the log, runs of one source cut anywhere.
func (h *harness) testChangeSources(t *testing.T) {
	sp := SpaceID("change sources")
	w := writer(t, sp)
	a0 := must[*record.Version](t)(w.First("app.note", "0"))
	a1 := must[*record.Version](t)(w.Next(a0, "1"))
	a2 := must[*record.Version](t)(w.Next(a1, "2"))
	b0 := must[*record.Version](t)(w.First("app.note", "b"))
	c0 := must[*record.Version](t)(w.First("app.note", "c"))
	s := h.store(t, nil)
	for _, o := range admit(t, s, "peer x", a2, a1) {
		want(t, o, engine.Later, engine.None)
	}
	outs := admit(t, s, "blobs:s", a0, b0)
	want(t, outs[0], engine.Stands, engine.Stub) // a1 and a2, woken, came after it
	want(t, outs[1], engine.Stands, engine.Whole)
	want(t, admit(t, s, "peer y", c0.Stub())[0], engine.Stands, engine.Stub)
	want(t, admit(t, s, "", c0)[0], engine.Stands, engine.Whole)
	type change struct {
		id, from string
		kind     engine.ChangeKind
	}
	wantAll := []change{{a0.ID, "blobs:s", engine.Stored}, {a1.ID, "peer x", engine.Stored}, {a2.ID, "peer x", engine.Stored},
		{b0.ID, "blobs:s", engine.Stored}, {c0.ID, "peer y", engine.Stored}, {c0.ID, "", engine.BodyAdded}}
	for after := range uint64(len(wantAll) + 1) {
		k := int(after)
		for c, err := range s.Changes(ctx, after) {
			if err != nil {
				t.Fatal(err)
			}
			if k >= len(wantAll) || c.Seq != uint64(k+1) || (change{c.ID.String(), c.From, c.Kind}) != wantAll[k] {
				t.Fatalf("changes after %d: %+v at %d, want %+v", after, c, k, wantAll[min(k, len(wantAll)-1)])
			}
			k++
		}
		if k != len(wantAll) {
			t.Fatalf("changes after %d stop at %d of %d", after, k, len(wantAll))
		}
	}
	clean(t, s)
}
