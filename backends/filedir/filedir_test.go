package filedir_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/minca-go/minca/backends/filedir"
	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
)

var ctx = context.Background()

func ref(data []byte) engine.FileRef {
	return engine.FileRef{Hash: canonical.IDOf(data), Size: int64(len(data))}
}

// Files live in the directory, a partial survives the store closing, and
// nothing is made until a file is written.
func TestDirKeepsFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "files")
	kv := keepKV{memory.Open(nil)}
	open := func() *engine.Store {
		s, err := engine.Open(kv, &engine.Options{Files: filedir.Open(root)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the directory is made before any file: %v", err)
	}
	data := bytes.Repeat([]byte("a photo "), 100_000)
	if err := s.PutFile(ctx, ref(data).Hash, data); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, ref(data).Hash.String())); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the file on disk: %v", err)
	}
	big := bytes.Repeat([]byte("video"), 300_000)
	p, err := s.OpenPartial(ctx, ref(big))
	if err != nil {
		t.Fatal(err)
	}
	p.Write(big[:1_000_000])
	p.Close()
	if es, _ := os.ReadDir(filepath.Join(root, "tmp")); len(es) != 0 {
		t.Fatalf("temporary files left: %d", len(es))
	}
	// Closing the store keeps the partial; the next store resumes it.
	s.Close()
	s = open()
	defer s.Close()
	p, err = s.OpenPartial(ctx, ref(big))
	if err != nil || p.Offset() != 1_000_000 {
		t.Fatalf("resumed at %d: %v", p.Offset(), err)
	}
	p.Write(big[1_000_000:])
	if err := p.Keep(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := s.File(ctx, ref(big).Hash); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the resumed file: %v", err)
	}
	if probs, err := s.VerifyFiles(ctx); err != nil || len(probs) != 0 {
		t.Fatalf("%v %v", probs, err)
	}
	// A file damaged on disk is named by the check.
	os.WriteFile(filepath.Join(root, ref(data).Hash.String()), []byte("rot"), 0o600)
	probs, err := s.VerifyFiles(ctx)
	if err != nil || len(probs) != 1 || !bytes.Contains([]byte(probs[0]), []byte(ref(data).Hash.String())) {
		t.Fatalf("damage not named: %v %v", probs, err)
	}
}

// What a crash leaves — a temporary file, bytes never recorded, a
// partial nothing names — is removed after the grace, and only then.
func TestDirTidiesLeftovers(t *testing.T) {
	root := t.TempDir()
	d := filedir.Open(root)
	now := time.Now()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Files: d, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tmp, _ := d.Create()
	tmp.Write([]byte("half an upload"))
	stray := []byte("kept, never recorded")
	os.WriteFile(filepath.Join(root, ref(stray).Hash.String()), stray, 0o600)
	part, _ := d.Partial(ref([]byte("partial")).Hash)
	part.Write([]byte("par"))
	part.Close()
	os.WriteFile(filepath.Join(root, "notes.txt"), []byte("not ours"), 0o600)
	if res, err := s.TidyFiles(ctx, time.Hour); err != nil || res.Removed != 0 {
		t.Fatalf("within the grace: %+v %v", res, err)
	}
	now = now.Add(2 * time.Hour)
	res, err := s.TidyFiles(ctx, time.Hour)
	if err != nil || res.Removed != 3 {
		t.Fatalf("after the grace: %+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal("a file not ours was removed")
	}
	tmp.Close()
}

// A kept or partial file's name is its content id in its one text: the
// directory's other names are listed as no file (nor removed by a tidy),
// and a temporary file's name never walks out of the directory.
func TestDirListsOnlyContentIDs(t *testing.T) {
	root := t.TempDir()
	d := filedir.Open(root)
	id := ref([]byte("a file")).Hash
	part, err := d.Partial(id)
	if err != nil {
		t.Fatal(err)
	}
	part.Close()
	for _, n := range []string{"bnotanid", strings.ToUpper(id.String()), id.String() + ".bak"} {
		for _, dir := range []string{root, filepath.Join(root, "partial")} {
			if err := os.WriteFile(filepath.Join(dir, n), []byte("not ours"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got []engine.FileEntry
	if err := d.List(func(e engine.FileEntry) error { got = append(got, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].File != id || got[0].Kind != engine.FilePartial {
		t.Fatalf("listed %+v, want only the partial of %s", got, id)
	}
	if err := d.RemoveTemp("../x"); err == nil {
		t.Fatal("remove temp ../x")
	}
}

// keepKV is a memory KV that survives its store's Close, to reopen.
type keepKV struct{ *memory.Store }

func (keepKV) Close() error { return nil }

// A file of many pieces, each hashed beside its writing, is kept whole.
func TestDirKeepsAFileWrittenInPieces(t *testing.T) {
	root := t.TempDir()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Files: filedir.Open(root)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := make([]byte, 40<<20+777)
	for i := range big {
		big[i] = byte(i * 7 / 5)
	}
	p, err := s.OpenPartial(ctx, ref(big))
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(big); off += 1 << 20 {
		if _, err := p.Write(big[off:min(len(big), off+1<<20)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Keep(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, ref(big).Hash.String())); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the file kept: %v", err)
	}
}

// writeAside writes data's pieces with WriteHashAside from three buffers
// reused as soon as each is released (a buffer released before its hash
// was taken would change the bytes hashed), pieces of 1 MiB and, between
// them, small ones written with Write; it reports the releases.
func writeAside(t *testing.T, p *engine.PartialFile, data []byte) int {
	t.Helper()
	free := make(chan []byte, 3)
	for range 3 {
		free <- make([]byte, 1<<20)
	}
	calls, released := 0, 0
	var mu sync.Mutex
	for off, i := 0, 0; off < len(data); i++ {
		if i%5 == 4 {
			end := min(len(data), off+1000)
			if _, err := p.Write(data[off:end]); err != nil {
				t.Fatal(err)
			}
			off = end
			continue
		}
		buf := <-free
		n := copy(buf, data[off:])
		calls++
		if _, err := p.WriteHashAside(buf[:n], func() {
			mu.Lock()
			released++
			mu.Unlock()
			free <- buf
		}); err != nil {
			t.Fatal(err)
		}
		off += n
	}
	for range 3 {
		clear(<-free)
	}
	mu.Lock()
	defer mu.Unlock()
	if released != calls {
		t.Fatalf("%d buffers released of %d written", released, calls)
	}
	return calls
}

// A file written with its hash aside is hashed in order from buffers
// handed back as soon as each is written and hashed; it resumes after a
// Close, and a byte changed on the way is refused at Keep.
func TestDirKeepsAFileHashedAside(t *testing.T) {
	root := t.TempDir()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Files: filedir.Open(root)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := make([]byte, 24<<20+12345)
	for i := range big {
		big[i] = byte(i * 13 / 7)
	}
	p, err := s.OpenPartial(ctx, ref(big))
	if err != nil {
		t.Fatal(err)
	}
	half := 10<<20 + 3000
	writeAside(t, p, big[:half])
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p, err = s.OpenPartial(ctx, ref(big)); err != nil {
		t.Fatal(err)
	}
	if p.Offset() != int64(half) {
		t.Fatalf("resumed at %d, not %d", p.Offset(), half)
	}
	if _, err := p.WriteHashAside(make([]byte, len(big)), func() {}); !errors.Is(err, engine.ErrFileTooLong) {
		t.Fatalf("bytes past the size: %v", err)
	}
	writeAside(t, p, big[half:])
	if err := p.Keep(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, ref(big).Hash.String())); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the file kept: %v", err)
	}

	other := bytes.Clone(big)
	other[0] ^= 1 // named by big's neighbour's hash, sent with one byte changed
	named := ref(other)
	bad := bytes.Clone(other)
	bad[7<<20+5] ^= 0x40
	if p, err = s.OpenPartial(ctx, named); err != nil {
		t.Fatal(err)
	}
	writeAside(t, p, bad)
	if err := p.Keep(ctx); !errors.Is(err, engine.ErrFileMismatch) {
		t.Fatalf("a changed byte: %v", err)
	}
	if held, _ := s.HasFile(ctx, named.Hash); held {
		t.Fatal("a file of changed bytes is held")
	}
	if p, err = s.OpenPartial(ctx, named); err != nil || p.Offset() != 0 {
		t.Fatalf("the partial of changed bytes is kept: %v", err)
	}
	p.Close()
}

// List reads a directory a page at a time: every file of several pages
// is listed once, also when each is removed as it is listed.
func TestDirListsPagesWhileRemoving(t *testing.T) {
	root := t.TempDir()
	d := filedir.Open(root)
	want := map[canonical.ID]bool{}
	for i := range 1000 {
		id := canonical.IDOf(fmt.Appendf(nil, "file %d", i))
		if err := os.WriteFile(filepath.Join(root, id.String()), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		want[id] = true
	}
	got := map[canonical.ID]int{}
	if err := d.List(func(e engine.FileEntry) error {
		got[e.File]++
		return d.Remove(e.File)
	}); err != nil {
		t.Fatal(err)
	}
	for id := range want {
		if got[id] != 1 {
			t.Fatalf("file %s listed %d times", id, got[id])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d files listed, %d there", len(got), len(want))
	}
	if es, err := os.ReadDir(root); err != nil || len(es) != 0 {
		t.Fatalf("%d entries left (%v)", len(es), err)
	}
}

// writeAll writes data in runs of one to four pieces of 1 MiB with
// WriteHashAsideAll, from buffers on a 4 KiB boundary (so a partial
// file's runs are written past the page cache, with one write) reused as
// soon as each is released; it reports the releases.
func writeAll(t *testing.T, p *engine.PartialFile, data []byte) {
	t.Helper()
	const piece = 1 << 20
	free := make(chan []byte, 8)
	for range 8 {
		b := make([]byte, piece+4096)
		skip := (4096 - int(uintptr(unsafe.Pointer(&b[0]))%4096)) % 4096
		free <- b[skip : skip+piece]
	}
	var released atomic.Int32
	calls := 0
	for off, run := 0, 1; off < len(data); run = run%4 + 1 {
		var bs [][]byte
		var rs []func()
		for range run {
			if off == len(data) {
				break
			}
			buf := <-free
			n := copy(buf, data[off:])
			off += n
			bs = append(bs, buf[:n])
			rs = append(rs, func() { released.Add(1); free <- buf[:piece] })
		}
		calls += len(bs)
		if _, err := p.WriteHashAsideAll(bs, rs); err != nil {
			t.Fatal(err)
		}
	}
	for range 8 {
		clear(<-free)
	}
	if int(released.Load()) != calls {
		t.Fatalf("%d buffers released of %d written", released.Load(), calls)
	}
}

// A file written in runs of chunks, each run with one write, is kept
// whole: from the start, resumed after a Close off a block's boundary
// (its runs then through the page cache), and with a byte changed on the
// way refused at Keep.
func TestDirKeepsAFileWrittenInRuns(t *testing.T) {
	root := t.TempDir()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Files: filedir.Open(root)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := make([]byte, 23<<20+777)
	for i := range big {
		big[i] = byte(i*11/3 + i>>16)
	}
	p, err := s.OpenPartial(ctx, ref(big))
	if err != nil {
		t.Fatal(err)
	}
	half := 9<<20 + 512
	writeAll(t, p, big[:9<<20])
	if _, err := p.Write(big[9<<20 : half]); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if p, err = s.OpenPartial(ctx, ref(big)); err != nil || p.Offset() != int64(half) {
		t.Fatalf("resumed at %d, not %d (%v)", p.Offset(), half, err)
	}
	if _, err := p.WriteHashAsideAll([][]byte{make([]byte, 1<<20), make([]byte, len(big))}, []func(){func() {}, func() {}}); !errors.Is(err, engine.ErrFileTooLong) {
		t.Fatalf("bytes past the size: %v", err)
	}
	writeAll(t, p, big[half:])
	if err := p.Keep(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, ref(big).Hash.String())); err != nil || !bytes.Equal(got, big) {
		t.Fatalf("the file kept: %v", err)
	}

	bad := bytes.Clone(big)
	bad[0] ^= 1
	named := ref(bad)
	bad[13<<20+5] ^= 0x40
	if p, err = s.OpenPartial(ctx, named); err != nil {
		t.Fatal(err)
	}
	writeAll(t, p, bad)
	if err := p.Keep(ctx); !errors.Is(err, engine.ErrFileMismatch) {
		t.Fatalf("a changed byte: %v", err)
	}
	if held, _ := s.HasFile(ctx, named.Hash); held {
		t.Fatal("a file of changed bytes is held")
	}
}
