package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
)

// countingFiles is a FileDir that counts directory syncs, and notes a
// file recorded held before a sync made its name durable.
type countingFiles struct {
	engine.FileDir
	mu       sync.Mutex
	unsynced map[canonical.ID]bool // kept, and no SyncKept since
	syncs    atomic.Int64
}

type countingTemp struct {
	engine.FileTemp
	d *countingFiles
}

func (d *countingFiles) Create() (engine.FileTemp, error) {
	t, err := d.FileDir.Create()
	return countingTemp{t, d}, err
}

func (t countingTemp) Keep(name canonical.ID) error {
	err := t.FileTemp.Keep(name)
	t.d.mu.Lock()
	t.d.unsynced[name] = true
	t.d.mu.Unlock()
	return err
}

// SyncKept takes the time a disk's directory sync may: files kept
// meanwhile wait for the next.
func (d *countingFiles) SyncKept() error {
	d.syncs.Add(1)
	d.mu.Lock()
	clear(d.unsynced)
	d.mu.Unlock()
	time.Sleep(5 * time.Millisecond)
	return d.FileDir.SyncKept()
}

// Files kept at once share a directory sync, and none is recorded held
// before the sync that makes its name durable.
func TestFilesKeptTogetherShareADirectorySync(t *testing.T) {
	ctx := context.Background()
	files := &countingFiles{FileDir: engine.NewMemoryFiles(), unsynced: map[canonical.ID]bool{}}
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			data := fmt.Appendf(nil, "file %d", i)
			if err := s.PutFile(ctx, canonical.IDOf(data), data); err != nil {
				errs <- err
				return
			}
			files.mu.Lock()
			bad := files.unsynced[canonical.IDOf(data)]
			files.mu.Unlock()
			if bad {
				errs <- fmt.Errorf("file %d recorded held before its name was synced", i)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := files.syncs.Load(); got < 1 || got >= n {
		t.Fatalf("%d directory syncs for %d files kept at once", got, n)
	}
	st, err := s.Stats(ctx)
	if err != nil || st.Files != n {
		t.Fatalf("%d files held (%v)", st.Files, err)
	}
}

// FileNamed tells when a version stored names a file not held, and only
// then.
func TestFileNamedTellsOfAFileToFetch(t *testing.T) {
	ctx := context.Background()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}, Files: engine.NewMemoryFiles()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	held, lacking := []byte("held"), []byte("not held")
	if err := s.PutFile(ctx, canonical.IDOf(held), held); err != nil {
		t.Fatal(err)
	}
	w, err := enginetest.NewWriter(enginetest.SpaceID("file named"))
	if err != nil {
		t.Fatal(err)
	}
	naming := func(n float64, data []byte) *record.Version {
		v, err := w.First("app.album", canonical.NewObject("n", n), func(d *record.Draft) {
			d.Files = []record.File{{Hash: canonical.IDOf(data), Size: int64(len(data))}}
		})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	told := s.FileNamed()
	if _, err := s.Admit(ctx, "p", []*record.Version{naming(1, held)}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-told:
		t.Fatal("told of a file to fetch when the version names only a held one")
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := s.Admit(ctx, "p", []*record.Version{naming(2, lacking)}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-told:
	case <-time.After(5 * time.Second):
		t.Fatal("not told of a version naming a file not held")
	}
}

// MissingFilesExcept passes over the files its caller has in hand, and
// lists the rest with a version naming them.
func TestMissingFilesExceptPassesOver(t *testing.T) {
	ctx := context.Background()
	s, sp, v, refs := storeLacking(t, "missing except", 5)
	var ids []canonical.ID
	for _, f := range refs {
		ids = append(ids, f.Hash)
	}
	inHand := map[canonical.ID]bool{ids[1]: true, ids[3]: true}
	got := map[canonical.ID]bool{}
	if err := s.MissingFilesExcept(ctx, sp, func(d canonical.ID) bool { return inHand[d] }, func(f engine.NamedFile) bool {
		if f.Version.String() != v.ID {
			t.Errorf("file %s named by %q", f.Hash, f.Version)
		}
		got[f.Hash] = true
		return true
	}); err != nil {
		t.Fatal(err)
	}
	for i, d := range ids {
		if got[d] == inHand[d] {
			t.Errorf("file %d: listed %v, in hand %v", i, got[d], inHand[d])
		}
	}
}

// MissingFilesAfter goes on past the file it is given, in the digests'
// order, and from the first with the zero ID.
func TestMissingFilesAfterGoesOn(t *testing.T) {
	ctx := context.Background()
	s, sp, _, refs := storeLacking(t, "missing after", 600) // past one page of the index
	list := func(after canonical.ID) []canonical.ID {
		var got []canonical.ID
		if err := s.MissingFilesAfter(ctx, sp, after, nil, func(f engine.NamedFile) bool {
			got = append(got, f.Hash)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	all := list(canonical.ID{})
	if len(all) != len(refs) {
		t.Fatalf("from the first: %d files of %d", len(all), len(refs))
	}
	for i := 1; i < len(all); i++ {
		if bytes.Compare(all[i-1][:], all[i][:]) >= 0 {
			t.Fatalf("files %d and %d out of the digests' order", i-1, i)
		}
	}
	for _, at := range []int{0, 299, 300, 598, 599} {
		got := list(all[at])
		if len(got) != len(all)-at-1 || (len(got) > 0 && got[0] != all[at+1]) {
			t.Errorf("after file %d: %d files, want the %d after it", at, len(got), len(all)-at-1)
		}
	}
	// A file not in the index: the look goes on past where it would be.
	var mid canonical.ID
	copy(mid[:], all[300][:])
	mid[31]++
	if got := list(mid); len(got) != len(all)-301 || got[0] != all[301] {
		t.Errorf("after a digest not listed: %d files, want %d", len(got), len(all)-301)
	}
}

// storeLacking is a store (closed when the test ends) holding, in a space
// of its own named by name, one version naming n files it does not hold.
func storeLacking(t *testing.T, name string, n int) (*engine.Store, string, *record.Version, []record.File) {
	t.Helper()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}, Files: engine.NewMemoryFiles()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sp := enginetest.SpaceID(name)
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	var refs []record.File
	for i := range n {
		data := fmt.Appendf(nil, "lacking %d", i)
		refs = append(refs, record.File{Hash: canonical.IDOf(data), Size: int64(len(data))})
	}
	v, err := w.First("app.album", canonical.NewObject("n", 1.0), func(d *record.Draft) { d.Files = refs })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Admit(context.Background(), "p", []*record.Version{v}); err != nil {
		t.Fatal(err)
	}
	return s, sp, v, refs
}

// NamingFile finds, by the file's entries of the files index alone, the
// version NamedFiles lists naming it, in its space only.
func TestNamingFileFindsTheNamingVersion(t *testing.T) {
	ctx := context.Background()
	s, sp, _, refs := storeLacking(t, "naming file", 600) // past one page of the index
	listed := map[canonical.ID]engine.NamedFile{}
	if err := s.NamedFiles(ctx, sp, func(f engine.NamedFile) bool {
		listed[f.Hash] = f
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(refs) {
		t.Fatalf("NamedFiles listed %d files of %d", len(listed), len(refs))
	}
	for i, ref := range refs {
		got, ok, err := s.NamingFile(ctx, sp, ref.Hash)
		if err != nil || !ok || got != listed[ref.Hash] {
			t.Fatalf("file %d: %+v %v %v, want %+v", i, got, ok, err, listed[ref.Hash])
		}
	}
	// Held, it is still named.
	if err := s.PutFile(ctx, refs[7].Hash, []byte("lacking 7")); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.NamingFile(ctx, sp, refs[7].Hash); err != nil || !ok || got != listed[refs[7].Hash] {
		t.Errorf("a held file: %+v %v %v", got, ok, err)
	}
	other := enginetest.SpaceID("another space")
	if _, ok, err := s.NamingFile(ctx, other, refs[0].Hash); err != nil || ok {
		t.Errorf("in a space naming none of them: %v %v", ok, err)
	}
	if _, ok, err := s.NamingFile(ctx, sp, canonical.IDOf([]byte("named by nothing"))); err != nil || ok {
		t.Errorf("a file no version names: %v %v", ok, err)
	}
}

// TidyFiles reads the held files a page at a time and looks each up in
// the files index: over more than two pages, with files named and not
// named interleaved in hash order, it deletes exactly those nothing
// names, whatever page they fall in.
func TestTidyFilesOverPages(t *testing.T) {
	ctx := context.Background()
	const named = 1300
	s, _, _, refs := storeLacking(t, "tidy pages", named)
	for i, ref := range refs {
		if err := s.PutFile(ctx, ref.Hash, fmt.Appendf(nil, "lacking %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	var unnamed []canonical.ID
	for i := range 1200 {
		data := fmt.Appendf(nil, "named by nothing %d", i)
		if err := s.PutFile(ctx, canonical.IDOf(data), data); err != nil {
			t.Fatal(err)
		}
		unnamed = append(unnamed, canonical.IDOf(data))
	}
	res, err := s.TidyFiles(ctx, -time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != len(unnamed) {
		t.Fatalf("tidied %+v, want %d deleted", res, len(unnamed))
	}
	for _, f := range unnamed {
		if held, err := s.HasFile(ctx, f); err != nil || held {
			t.Fatalf("unnamed file %s held %v (%v) after a tidy", f, held, err)
		}
	}
	n := 0
	if err := s.Files(ctx, func(engine.FileInfo) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if n != named {
		t.Fatalf("%d files held after a tidy, want the %d named", n, named)
	}
}
