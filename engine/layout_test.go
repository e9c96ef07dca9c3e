package engine_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// A store written in an earlier key layout is refused with a clear error,
// not misread.
func TestEarlierLayoutRefused(t *testing.T) {
	for _, l := range []byte{1, 2, 3, 4, 5} {
		kv := memory.Open(nil)
		b, _ := kv.NewBatch()
		// The counters of an earlier engine: its layout first.
		b.Set([]byte("_state"), []byte{l, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
		if err := b.Commit(engine.Sync); err != nil {
			t.Fatal(err)
		}
		if _, err := engine.Open(kv, nil); !errors.Is(err, engine.ErrLayout) {
			t.Fatalf("layout %d: %v", l, err)
		}
	}
}

// A store that kept files in its KV ('F', before FileDir) has them moved
// to its FileDir when it opens to write, counted as before.
func TestOldFilesMoved(t *testing.T) {
	ctx := context.Background()
	kv := keepKV{memory.Open(nil)}
	s, err := engine.Open(kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("a file kept the old way")
	d := canonical.IDOf(data)
	if err := s.PutFile(ctx, d, data); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// As an earlier engine left it: the bytes under 'F', no 'f'.
	b, _ := kv.NewBatch()
	b.Set(append([]byte{'F'}, d[:]...), data)
	b.Delete(append([]byte{'f'}, d[:]...))
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	files := engine.NewMemoryFiles()
	s, err = engine.Open(kv, &engine.Options{Files: files})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, err := s.File(ctx, d); err != nil || string(got) != string(data) {
		t.Fatalf("the moved file: %q %v", got, err)
	}
	if _, err := kv.Get(append([]byte{'F'}, d[:]...)); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the old entry stays: %v", err)
	}
	if probs, err := s.Check(ctx, nil); err != nil || len(probs) != 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
}

// A layout 7 store, which kept no files index, has it built when it opens
// to write: the files its versions held whole name and it lacks are listed
// as before, and one arriving afterwards leaves the list.
func TestFilesIndexUpgraded(t *testing.T) {
	ctx := context.Background()
	kv := keepKV{memory.Open(nil)}
	sp := enginetest.SpaceID("upgrade files")
	files := engine.NewMemoryFiles()
	st, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := enginetest.NewWriter(sp)
	held, lacking, gone := []byte("held"), []byte("lacking"), []byte("named by a stub only")
	naming := func(fs ...[]byte) enginetest.Opt {
		return func(d *record.Draft) {
			for _, f := range fs {
				d.Files = append(d.Files, record.File{Hash: canonical.IDOf(f), Size: int64(len(f))})
			}
		}
	}
	a0, _ := w.First("app.album", canonical.NewObject("n", 0.0), naming(gone))
	a1, _ := w.Next(a0, canonical.NewObject("n", 1.0), naming(held, lacking))
	if _, err := st.Admit(ctx, "peer", []*record.Version{a0, a1}); err != nil {
		t.Fatal(err)
	}
	if err := st.PutFile(ctx, canonical.IDOf(held), held); err != nil {
		t.Fatal(err)
	}
	missing := func(s *engine.Store) []string {
		var out []string
		if err := s.MissingFiles(ctx, "", func(f engine.NamedFile) bool { out = append(out, f.Hash.String()+" "+f.Version.String()); return true }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	before := missing(st)
	if want := canonical.IDOf(lacking).String() + " " + a1.ID; len(before) != 1 || before[0] != want {
		t.Fatalf("lacking %v, want [%s]", before, want)
	}
	st.Close()
	// As layout 7 left it: no 'n' nor 'N', the counters' layout 7.
	state, err := kv.Get([]byte("_state"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := kv.NewBatch()
	for _, table := range []byte{'n', 'N'} {
		it, _ := kv.NewIter([]byte{table}, []byte{table + 1})
		for it.Next() {
			b.Delete(append([]byte(nil), it.Key()...))
		}
		it.Close()
	}
	b.Set([]byte("_state"), append([]byte{7}, state[1:]...))
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	up, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	if got := missing(up); !slices.Equal(got, before) {
		t.Fatalf("after the upgrade, lacking %v, want %v", got, before)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout {
		t.Fatalf("the upgraded store is in layout %d", state[0])
	}
	if err := up.PutFile(ctx, canonical.IDOf(lacking), lacking); err != nil {
		t.Fatal(err)
	}
	if got := missing(up); len(got) != 0 {
		t.Fatalf("a file arrived, still lacking: %v", got)
	}
	if probs, err := up.Check(ctx, nil); err != nil || len(probs) > 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
	up.Close()
}

// A store of layout 9 (every value kept as the engine wrote it) is read
// as it is, checks clean, and is in this layout once written to.
func TestLayout9Read(t *testing.T) {
	ctx := context.Background()
	kv := keepKV{memory.Open(nil)}
	st, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := enginetest.NewWriter(enginetest.SpaceID("nine"))
	if err != nil {
		t.Fatal(err)
	}
	v0, _ := w.First("app.note", canonical.NewObject("n", 0.0))
	v1, _ := w.Next(v0, canonical.NewObject("n", 1.0))
	if _, err := st.Admit(ctx, "peer", []*record.Version{v0}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	state, err := kv.Get([]byte("_state"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := kv.NewBatch()
	b.Set([]byte("_state"), append([]byte{9}, state[1:]...))
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	st, err = engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if probs, err := st.Check(ctx, nil); err != nil || len(probs) > 0 {
		t.Fatalf("check: %v %v", probs, err)
	}
	id, err := canonical.ParseID(v0.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Version(ctx, id); err != nil {
		t.Fatalf("the version layout 9 held: %v", err)
	}
	if _, err := st.Admit(ctx, "peer", []*record.Version{v1}); err != nil {
		t.Fatal(err)
	}
	if state, _ := kv.Get([]byte("_state")); state[0] != engine.Layout || engine.Layout != 18 {
		t.Fatalf("written to, the store is in layout %d", state[0])
	}
}

// A store a later engine wrote is refused as such, not called damaged.
func TestLaterLayoutRefused(t *testing.T) {
	kv := memory.Open(nil)
	b, _ := kv.NewBatch()
	b.Set([]byte("_state"), []byte{19, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	if err := b.Commit(engine.Sync); err != nil {
		t.Fatal(err)
	}
	_, err := engine.Open(kv, nil)
	if !errors.Is(err, engine.ErrLayout) || errors.Is(err, engine.ErrCorrupt) || !strings.Contains(err.Error(), "layout 19, written by a later minca") {
		t.Fatalf("%v", err)
	}
}

// openJudged opens a store over kv under the judge that lets every root
// write, as the layout tests grow and reopen their stores.
func openJudged(t *testing.T, kv engine.KV) *engine.Store {
	t.Helper()
	s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checksClean fails the test unless s checks clean; when says at which
// step of the test.
func checksClean(t *testing.T, s *engine.Store, when string) {
	t.Helper()
	if probs, err := s.Check(context.Background(), nil); err != nil || len(probs) != 0 {
		t.Fatalf("%s: check: %v %v", when, probs, err)
	}
}
