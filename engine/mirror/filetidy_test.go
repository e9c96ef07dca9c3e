package mirror_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/minca-go/minca/backends/s3"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/record"
)

// clock is a settable clock for grace periods.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	return c
}
func (c *clock) now() time.Time       { return time.UnixMilli(c.ms.Load()) }
func (c *clock) pass(d time.Duration) { c.ms.Add(d.Milliseconds()) }
func fileRef(data []byte) engine.FileRef {
	return engine.FileRef{Hash: canonical.IDOf(data), Size: int64(len(data))}
}

// naming names files in a version (02 §3.1).
func naming(fs ...engine.FileRef) enginetest.Opt {
	return func(d *record.Draft) { d.Files = fs }
}

func fileBytes(n int, seed uint64) []byte {
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{byte(seed)}).Read(b)
	return b
}

// chunksOf lists the chunks of a file in the blob store, by writer.
func chunksOf(t *testing.T, b engine.Blobs, file canonical.ID) map[string]int {
	hash := file.String()
	t.Helper()
	out := map[string]int{}
	infos, err := b.List(ctx, "files/", "", 100000)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		parts := strings.Split(strings.TrimPrefix(i.Name, "files/"), "/")
		if len(parts) == 2 && strings.HasPrefix(parts[1], hash+".") {
			out[parts[0]]++
		}
	}
	return out
}

// readsBack reports whether a new store reading the blob store ends
// holding the file, with the bytes given.
func readsBack(t *testing.T, b engine.Blobs, hash canonical.ID, data []byte) bool {
	t.Helper()
	s := newStore(t)
	if _, err := newMirror(t, s, b, nil).Import(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := s.File(ctx, hash)
	return err == nil && bytes.Equal(got, data)
}

// blobStores are the two kinds a writer tidies: a folder and an S3 bucket
// (gofakes3).
func blobStores(t *testing.T) map[string]func(t *testing.T) engine.Blobs {
	return map[string]func(t *testing.T) engine.Blobs{
		"folder": func(t *testing.T) engine.Blobs { _, b := sharedFolder(t); return b },
		"s3":     newS3Blobs,
	}
}

func newS3Blobs(t *testing.T) engine.Blobs {
	t.Helper()
	be := s3mem.New()
	if err := be.CreateBucket("bkt"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(be).Server())
	t.Cleanup(srv.Close)
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	b, err := s3.Open(ctx, "s3://bkt/mirror?region=us-east-1&path-style=true&endpoint="+srv.URL,
		&s3.Options{Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), Create: true, MaxAttempts: 2})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A file that arrives after the version naming it was exported (fetched
// from a peer later) is written on a later pass, so the blob store
// becomes whole: a new reader gets it.
func TestFileExportedOnALaterPass(t *testing.T) {
	for kind, open := range blobStores(t) {
		t.Run(kind, func(t *testing.T) {
			b := open(t)
			clk := newClock()
			d := newDevice(t, enginetest.SpaceID("later"), b, 1, &mirror.Options{CompactAt: -1, Now: clk.now})
			data := fileBytes(mirror.FileChunk+1000, 1)
			f := fileRef(data)
			v, err := d.w.First("app.photo", canonical.NewObject("t", 1.0), naming(f))
			if err != nil {
				t.Fatal(err)
			}
			admitAll(t, d.s, v)
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
			if n := chunksOf(t, b, f.Hash); len(n) != 0 {
				t.Fatalf("chunks of a file the store does not hold: %v", n)
			}
			if readsBack(t, b, f.Hash, data) {
				t.Fatal("a reader got a file nobody wrote")
			}
			// The file comes later, as from a peer; the next files pass
			// runs a minute or more after the last.
			if err := d.s.PutFile(ctx, f.Hash, data); err != nil {
				t.Fatal(err)
			}
			clk.pass(time.Minute)
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
			w, _ := d.m.Writer(ctx)
			if n := chunksOf(t, b, f.Hash); n[w] != 2 {
				t.Fatalf("after a later pass the blob store holds %v chunks, want 2 of %s", n, w)
			}
			if !readsBack(t, b, f.Hash, data) {
				t.Fatal("a new reader does not get the file written on the later pass")
			}
			// Compaction keeps a file a held version names.
			v2, err := d.w.Next(v, canonical.NewObject("t", 2.0), naming(f))
			if err != nil {
				t.Fatal(err)
			}
			admitAll(t, d.s, v2)
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
			clk.pass(time.Hour)
			if res, err := d.m.Compact(ctx); err != nil || len(res.Rewrote) < 2 {
				t.Fatalf("compact: %+v %v", res, err)
			}
			if n := chunksOf(t, b, f.Hash); n[w] != 2 || !readsBack(t, b, f.Hash, data) {
				t.Fatalf("after compaction the blob store holds %v chunks, want 2 and the file readable", n)
			}
		})
	}
}

// A writer deletes its copy of a file no version its store holds whole
// names only once the file has stayed unnamed for FileGrace, keeps a copy
// named again meanwhile, and never touches another writer's copy: a file
// two writers' versions name stays readable while either names it, and
// when one writer's copy went while another's store still names the file,
// that one writes it again. On a folder and on S3.
func TestFileCopiesTidied(t *testing.T) {
	for kind, open := range blobStores(t) {
		t.Run(kind, func(t *testing.T) {
			b := open(t)
			clk := newClock()
			o := func() *mirror.Options {
				return &mirror.Options{CompactAt: -1, FileGrace: 10 * time.Minute, Now: clk.now}
			}
			space := enginetest.SpaceID("tidy-files")
			a := newDevice(t, space, b, 1, o())
			c := newDevice(t, space, b, 2, o())
			shared, own := fileBytes(3000, 2), fileBytes(mirror.FileChunk+5, 3)
			fs, fo := fileRef(shared), fileRef(own)
			for _, d := range []*device{a, c} {
				if err := d.s.PutFile(ctx, fs.Hash, shared); err != nil {
					t.Fatal(err)
				}
			}
			if err := a.s.PutFile(ctx, fo.Hash, own); err != nil {
				t.Fatal(err)
			}
			first := func(d *device, f engine.FileRef) *record.Version {
				v, err := d.w.First("app.photo", canonical.NewObject("t", 1.0), naming(f))
				if err != nil {
					t.Fatal(err)
				}
				admitAll(t, d.s, v)
				return v
			}
			next := func(d *device, prev *record.Version, opts ...enginetest.Opt) *record.Version {
				v, err := d.w.Next(prev, canonical.NewObject("t", 2.0), opts...)
				if err != nil {
					t.Fatal(err)
				}
				admitAll(t, d.s, v)
				return v
			}
			tidy := func(d *device) mirror.FilesResult {
				t.Helper()
				res, err := d.m.TidyFiles(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			round := func(d *device) {
				t.Helper()
				if err := d.m.Round(ctx); err != nil {
					t.Fatal(err)
				}
			}
			vo, vs := first(a, fo), first(a, fs)
			round(a)
			wa, _ := a.m.Writer(ctx)

			// The grace, and a file named again within it.
			vo = next(a, vo)
			if res := tidy(a); res.Retired != 1 || res.Deleted != 0 {
				t.Fatalf("A's pass after its record moved on: %+v, want its file retired, nothing deleted", res)
			}
			clk.pass(9 * time.Minute)
			round(a)
			if n := chunksOf(t, b, fo.Hash); n[wa] != 2 {
				t.Fatalf("A deleted its file before the grace was over: %v", n)
			}
			vo = next(a, vo, naming(fo))
			clk.pass(time.Hour)
			if res := tidy(a); res.Deleted != 0 {
				t.Fatalf("a file named again was deleted: %+v", res)
			}
			round(a)
			if n := chunksOf(t, b, fo.Hash); n[wa] != 2 {
				t.Fatalf("A's copy of a file it names again: %v", n)
			}
			next(a, vo)
			tidy(a)
			clk.pass(11 * time.Minute)
			round(a)
			if n := chunksOf(t, b, fo.Hash); len(n) != 0 {
				t.Fatalf("A's unnamed file after the grace: %v, want gone", n)
			}

			// Two writers name the shared file; c has its own copy. A,
			// not knowing c's version, lets its copy go: c's stays, and
			// the file is still read from the blob store.
			vc := first(c, fs)
			round(c)
			wc, _ := c.m.Writer(ctx)
			if n := chunksOf(t, b, fs.Hash); n[wa] != 1 || n[wc] != 1 {
				t.Fatalf("the shared file's copies: %v", n)
			}
			next(a, vs)
			tidy(a)
			clk.pass(11 * time.Minute)
			tidy(a)
			if n := chunksOf(t, b, fs.Hash); n[wa] != 0 || n[wc] != 1 {
				t.Fatalf("after A let the shared file go: %v, want c's copy alone", n)
			}
			if !readsBack(t, b, fs.Hash, shared) {
				t.Fatal("the file c's version names is no longer readable from the blob store")
			}
			round(c) // takes in A's versions: its own still names the file
			clk.pass(time.Hour)
			round(c)
			if n := chunksOf(t, b, fs.Hash); n[wc] != 1 {
				t.Fatalf("c deleted a copy its own version names: %v", n)
			}
			// A takes in c's version: it names the file again, and c's
			// copy serves; A writes none of its own.
			round(a)
			if n := chunksOf(t, b, fs.Hash); n[wa] != 0 || n[wc] != 1 {
				t.Fatalf("A named the file again: %v, want c's copy alone", n)
			}
			// c moves on and lets its copy go; A, not knowing yet, still
			// names the file and finds no copy: it writes one again.
			next(c, vc)
			round(c) // takes in A's move too: nothing it holds names the file
			tidy(c)
			clk.pass(11 * time.Minute)
			tidy(c)
			if n := chunksOf(t, b, fs.Hash); len(n) != 0 {
				t.Fatalf("c's copy after it let the file go: %v (A %s, c %s)", n, wa, wc)
			}
			if res := tidy(a); res.Exported != 1 || chunksOf(t, b, fs.Hash)[wa] != 1 {
				t.Fatalf("A, still naming the file no writer has: %+v", res)
			}
			// Once A knows, the last copy goes after the grace.
			round(a)
			tidy(a)
			clk.pass(11 * time.Minute)
			round(a)
			if n := chunksOf(t, b, fs.Hash); len(n) != 0 {
				t.Fatalf("a file no version names, past the grace: %v", n)
			}
		})
	}
}

// crashing fails file chunks' Put or Delete once a number of them went
// through, as a process killed between two steps stops there.
type crashing struct {
	engine.Blobs
	puts, deletes atomic.Int64 // left before each fails; < 0: never
}

var errCrash = errors.New("crashed")

func (c *crashing) Put(ctx context.Context, name string, data []byte) error {
	if strings.HasPrefix(name, "files/") && c.puts.Load() >= 0 && c.puts.Add(-1) < 0 {
		return errCrash
	}
	return c.Blobs.Put(ctx, name, data)
}

func (c *crashing) Delete(ctx context.Context, name string) error {
	if strings.HasPrefix(name, "files/") && c.deletes.Load() >= 0 && c.deletes.Add(-1) < 0 {
		return errCrash
	}
	return c.Blobs.Delete(ctx, name)
}

func (c *crashing) StoreID() string { return c.Blobs.(engine.BlobStoreID).StoreID() }

// A crash between any two steps of the files pass leaves nothing a later
// pass (of a new mirror, as after a restart) does not finish: a copy cut
// short is completed, a deletion cut short is done again with the grace
// not started over. On a folder and on S3.
func TestFileTidyCrash(t *testing.T) {
	for kind, open := range blobStores(t) {
		t.Run(kind, func(t *testing.T) {
			b := open(t)
			clk := newClock()
			fb := &crashing{Blobs: b}
			fb.puts.Store(-1)
			fb.deletes.Store(-1)
			o := &mirror.Options{CompactAt: -1, FileGrace: 10 * time.Minute, Now: clk.now}
			space := enginetest.SpaceID("crash-files")
			d := newDevice(t, space, fb, 1, o)
			data := fileBytes(3*mirror.FileChunk+7, 4)
			f := fileRef(data)
			v, err := d.w.First("app.photo", canonical.NewObject("t", 1.0), naming(f))
			if err != nil {
				t.Fatal(err)
			}
			admitAll(t, d.s, v)
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
			if err := d.s.PutFile(ctx, f.Hash, data); err != nil {
				t.Fatal(err)
			}
			// The later export stops after two of its four chunks.
			fb.puts.Store(2)
			if _, err := d.m.TidyFiles(ctx); !errors.Is(err, errCrash) {
				t.Fatalf("the export cut short: %v", err)
			}
			w, _ := d.m.Writer(ctx)
			if n := chunksOf(t, b, f.Hash); n[w] != 2 {
				t.Fatalf("chunks after the crash: %v, want 2", n)
			}
			fb.puts.Store(-1)
			restart := func() {
				d.m.Close()
				d.m = newMirror(t, d.s, fb, o)
			}
			restart()
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
			if n := chunksOf(t, b, f.Hash); n[w] != 4 || !readsBack(t, b, f.Hash, data) {
				t.Fatalf("after the restart: %v chunks, want 4 and the file readable", n)
			}
			// Unnamed now; the deletion stops after one chunk.
			v2, err := d.w.Next(v, canonical.NewObject("t", 2.0))
			if err != nil {
				t.Fatal(err)
			}
			admitAll(t, d.s, v2)
			if res, err := d.m.TidyFiles(ctx); err != nil || res.Retired != 1 {
				t.Fatalf("retiring: %+v %v", res, err)
			}
			clk.pass(11 * time.Minute)
			fb.deletes.Store(1)
			if _, err := d.m.TidyFiles(ctx); !errors.Is(err, errCrash) {
				t.Fatalf("the deletion cut short: %v", err)
			}
			if n := chunksOf(t, b, f.Hash); n[w] != 3 {
				t.Fatalf("chunks after the crash: %v, want 3", n)
			}
			fb.deletes.Store(-1)
			restart()
			if res, err := d.m.TidyFiles(ctx); err != nil || res.Deleted != 1 {
				t.Fatalf("after the restart, with no more time gone by: %+v %v, want the copy deleted", res, err)
			}
			if n := chunksOf(t, b, f.Hash); len(n) != 0 {
				t.Fatalf("chunks left: %v", n)
			}
		})
	}
}
