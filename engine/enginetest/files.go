package enginetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// withFiles names files in a version (02 §3.1).
func withFiles(fs ...engine.FileRef) Opt {
	return func(d *record.Draft) { d.Files = fs }
}

func fileOf(data []byte) engine.FileRef {
	return engine.FileRef{Hash: canonical.IDOf(data), Size: int64(len(data))}
}

// A file is written as a stream and kept under its content id; one
// fetched in pieces resumes where it stopped and is held only once it
// checks out; wrong bytes are never held.
func (h *harness) testFileStreams(t *testing.T) {
	s := h.store(t, nil)
	data := bytes.Repeat([]byte("0123456789abcdef"), 100_000) // 1.6 MB
	w := must[*engine.FileWriter](t)(s.CreateFile(ctx))
	for p := data; len(p) > 0; p = p[min(len(p), 70_001):] {
		if _, err := w.Write(p[:min(len(p), 70_001)]); err != nil {
			t.Fatal(err)
		}
	}
	ref := must[engine.FileRef](t)(w.Keep(ctx))
	if ref != fileOf(data) {
		t.Fatalf("kept as %+v, want %+v", ref, fileOf(data))
	}
	r := must[engine.FileReader](t)(s.OpenFile(ctx, ref.Hash))
	got := make([]byte, 1000)
	if n, err := r.ReadAt(got, 1_000_000); n != 1000 || err != nil || !bytes.Equal(got, data[1_000_000:1_001_000]) {
		t.Fatalf("ReadAt: %d %v", n, err)
	}
	r.Close()
	if st := stats(t, s); st.Files != 1 || st.FileBytes != int64(len(data)) {
		t.Fatalf("stats %+v", st)
	}

	// Fetched in pieces: a partial grows, survives being closed, and is
	// held only when whole and checked.
	other := bytes.Repeat([]byte("xyz"), 50_000)
	oref := fileOf(other)
	p := must[*engine.PartialFile](t)(s.OpenPartial(ctx, oref))
	if _, err := s.OpenPartial(ctx, oref); !errors.Is(err, engine.ErrFileBusy) {
		t.Fatalf("a second writer of one partial: %v", err)
	}
	p.Write(other[:60_000])
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if held := must[bool](t)(s.HasFile(ctx, oref.Hash)); held {
		t.Fatal("a partial file is held")
	}
	p = must[*engine.PartialFile](t)(s.OpenPartial(ctx, oref))
	if p.Offset() != 60_000 {
		t.Fatalf("resumes at %d, want 60000", p.Offset())
	}
	if _, err := p.Write(make([]byte, len(other))); !errors.Is(err, engine.ErrFileTooLong) {
		t.Fatalf("bytes past the size: %v", err)
	}
	p.Write(other[60_000:])
	if err := p.Keep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := must[[]byte](t)(s.File(ctx, oref.Hash)); !bytes.Equal(got, other) {
		t.Fatal("the fetched file differs")
	}
	if _, err := s.OpenPartial(ctx, oref); !errors.Is(err, engine.ErrFileHeld) {
		t.Fatalf("a partial of a held file: %v", err)
	}

	// Wrong bytes of the right length are not held, and leave nothing.
	third := []byte("the genuine third file")
	p = must[*engine.PartialFile](t)(s.OpenPartial(ctx, fileOf(third)))
	p.Write([]byte("a forged third file!!!"))
	if err := p.Keep(ctx); !errors.Is(err, engine.ErrFileMismatch) {
		t.Fatalf("wrong bytes kept: %v", err)
	}
	p = must[*engine.PartialFile](t)(s.OpenPartial(ctx, fileOf(third)))
	if p.Offset() != 0 {
		t.Fatalf("wrong bytes left a partial of %d bytes", p.Offset())
	}
	p.Discard()
	if held := must[bool](t)(s.HasFile(ctx, fileOf(third).Hash)); held {
		t.Fatal("a file of wrong bytes is held")
	}
	if probs := must[[]string](t)(s.VerifyFiles(ctx)); len(probs) != 0 {
		t.Fatalf("VerifyFiles: %v", probs)
	}
	clean(t, s)
}

// Files kept at once, by many callers, some the same file twice, are all
// held and each counted once: callers that share one synced batch each
// see their own file recorded when Keep returns.
func (h *harness) testFilesKeptAtOnce(t *testing.T) {
	s := h.store(t, nil)
	const n = 64
	files := make([][]byte, n)
	var total int64
	for i := range files {
		files[i] = []byte(fmt.Sprintf("file %d of the crowd, %s", i, bytes.Repeat([]byte{'x'}, i)))
		total += int64(len(files[i]))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range 2 * n {
		wg.Go(func() {
			data := files[i%n]
			if i < n {
				errs <- s.PutFile(ctx, fileOf(data).Hash, data)
				return
			}
			p, err := s.OpenPartial(ctx, fileOf(data))
			if errors.Is(err, engine.ErrFileBusy) || errors.Is(err, engine.ErrFileHeld) {
				errs <- nil
				return
			}
			if err != nil {
				errs <- err
				return
			}
			if _, err := p.Write(data); err != nil {
				errs <- err
				return
			}
			if err := p.Keep(ctx); err != nil {
				errs <- err
				return
			}
			// Held the moment Keep returned, not at a later batch.
			if held, err := s.HasFile(ctx, fileOf(data).Hash); err != nil || !held {
				errs <- fmt.Errorf("file %d not held after Keep: %v", i%n, err)
				return
			}
			errs <- nil
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for i, data := range files {
		if held := must[bool](t)(s.HasFile(ctx, fileOf(data).Hash)); !held {
			t.Fatalf("file %d is not held", i)
		}
	}
	if st := stats(t, s); st.Files != n || st.FileBytes != total {
		t.Fatalf("stats %d files, %d bytes; want %d, %d", st.Files, st.FileBytes, n, total)
	}
	if probs := must[[]string](t)(s.VerifyFiles(ctx)); len(probs) != 0 {
		t.Fatalf("VerifyFiles: %v", probs)
	}
}

// The files a store keeps are those its versions held whole name: one a
// superseded version alone names goes with its body, after the grace;
// an upload that nothing names yet stays for the grace.
func (h *harness) testFilesNamed(t *testing.T) {
	clock := newClock()
	s := h.store(t, &engine.Options{Now: clock.Now})
	sp := SpaceID("files")
	w := writer(t, sp)
	photo, newer, upload, shared := []byte("photo one"), []byte("photo two"), []byte("an upload"), []byte("both name it")
	for _, f := range [][]byte{photo, newer, upload, shared} {
		if err := s.PutFile(ctx, fileOf(f).Hash, f); err != nil {
			t.Fatal(err)
		}
	}
	v1 := must[*record.Version](t)(w.First("app.album", "first", withFiles(fileOf(photo), fileOf(shared))))
	other := writer(t, sp)
	o1 := must[*record.Version](t)(other.First("app.album", "theirs", withFiles(fileOf(shared))))
	admit(t, s, "peer", v1, o1)
	missing := must[*record.Version](t)(other.First("app.album", "lacks", withFiles(engine.FileRef{Hash: canonical.IDOf([]byte("never")), Size: 5}, fileOf(nil))))
	admit(t, s, "peer", missing)
	var got []engine.NamedFile
	if err := s.MissingFiles(ctx, sp, func(f engine.NamedFile) bool { got = append(got, f); return true }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Size != 5 || got[0].Version.String() != missing.ID || got[0].Space != sp {
		t.Fatalf("missing %+v", got)
	}
	if held := must[bool](t)(s.HasFile(ctx, fileOf(nil).Hash)); !held {
		t.Fatal("the empty file is not made")
	}
	clock.add(2 * time.Hour)
	res := must[engine.TidyFilesResult](t)(s.TidyFiles(ctx, time.Hour))
	if res.Deleted != 2 { // newer and upload: nothing names them
		t.Fatalf("tidied %+v", res)
	}
	for f, want := range map[string]bool{"photo": true, "shared": true, "newer": false, "upload": false} {
		data := map[string][]byte{"photo": photo, "shared": shared, "newer": newer, "upload": upload}[f]
		if held := must[bool](t)(s.HasFile(ctx, fileOf(data).Hash)); held != want {
			t.Fatalf("%s held %v, want %v", f, held, want)
		}
	}
	// A newer version naming another file: the first becomes a stub, its
	// photo unnamed; it goes once the grace since it was kept has passed.
	if err := s.PutFile(ctx, fileOf(newer).Hash, newer); err != nil {
		t.Fatal(err)
	}
	v2 := must[*record.Version](t)(w.Next(v1, "second", withFiles(fileOf(newer))))
	admit(t, s, "peer", v2)
	res = must[engine.TidyFilesResult](t)(s.TidyFiles(ctx, time.Hour))
	if res.Deleted != 1 {
		t.Fatalf("tidied %+v: the superseded photo goes, the new one is within its grace and named", res)
	}
	if held := must[bool](t)(s.HasFile(ctx, fileOf(photo).Hash)); held {
		t.Fatal("a file only a stub names is kept")
	}
	if held := must[bool](t)(s.HasFile(ctx, fileOf(shared).Hash)); !held {
		t.Fatal("a file another writer's version names was deleted")
	}
	var all []engine.FileInfo
	s.Files(ctx, func(fi engine.FileInfo) bool { all = append(all, fi); return true })
	if st := stats(t, s); st.Files != int64(len(all)) {
		t.Fatalf("stats count %d files, %d listed", st.Files, len(all))
	}
	if r, err := s.OpenFile(ctx, fileOf(photo).Hash); !errors.Is(err, engine.ErrNotFound) {
		if r != nil {
			io.Copy(io.Discard, io.NewSectionReader(r, 0, 1))
		}
		t.Fatalf("a deleted file opens: %v", err)
	}
	clean(t, s)
}
