package folder

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/blobstest"
)

const seg = "segments/abcdefghijklmnopqrst/000000000001-0123456789abcdef0123456789abcdef.seg"

func openMem(t *testing.T) (*Store, *MemFS) {
	t.Helper()
	m := NewMemFS()
	_ = m.MkdirAll("/data")
	s, err := Open("/data/minca", &Options{FS: m, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return s, m
}

func names(t *testing.T, s *Store, prefix string) []string {
	t.Helper()
	l, err := s.List(context.Background(), prefix, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range l {
		n := b.Name
		if b.Pending {
			n += " (pending)"
		}
		out = append(out, n)
	}
	return out
}

// The Blobs contract on both filesystems.
func TestContract(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"mem", "os"} {
		t.Run(kind, func(t *testing.T) {
			var s *Store
			var err error
			if kind == "mem" {
				s, _ = openMem(t)
			} else {
				s, err = Open(filepath.Join(t.TempDir(), "store"), &Options{Create: true})
				if err != nil {
					t.Fatal(err)
				}
			}
			if s.StoreID() == "" {
				t.Fatal("no store id")
			}
			for i := 1; i <= 5; i++ {
				name := fmt.Sprintf("segments/w%d/%012d-x.seg", i%2, i)
				if err := s.Put(ctx, name, []byte(name)); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Put(ctx, "segments/w1/000000000001-x.seg", []byte("other")); !errors.Is(err, engine.ErrBlobExists) {
				t.Fatalf("overwrite: %v", err)
			}
			got, err := s.Get(ctx, "segments/w1/000000000001-x.seg")
			if err != nil || string(got) != "segments/w1/000000000001-x.seg" {
				t.Fatalf("get: %q %v", got, err)
			}
			if _, err := s.Get(ctx, "segments/w1/000000000009-x.seg"); !errors.Is(err, engine.ErrBlobNotFound) {
				t.Fatalf("get missing: %v", err)
			}
			all := names(t, s, "segments/")
			if len(all) != 5 {
				t.Fatalf("list: %v", all)
			}
			page, err := s.List(ctx, "segments/w1/", "segments/w1/000000000001-x.seg", 1)
			if err != nil || len(page) != 1 || page[0].Name != "segments/w1/000000000003-x.seg" {
				t.Fatalf("page: %v %v", page, err)
			}
			dirs, err := s.Dirs(ctx, "segments/")
			if err != nil || strings.Join(dirs, ",") != "w0,w1" {
				t.Fatalf("dirs: %v %v", dirs, err)
			}
			if err := s.Delete(ctx, "segments/w1/000000000001-x.seg"); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "segments/w1/000000000001-x.seg"); err != nil {
				t.Fatalf("deleting a gone object: %v", err)
			}
			if n := len(names(t, s, "segments/")); n != 4 {
				t.Fatalf("after delete: %d", n)
			}
			for _, bad := range []string{"Segments/x", "a/../b", ".hidden", "a//b", "con.seg", "a/b.", MarkerName} {
				if err := s.Put(ctx, bad, nil); !errors.Is(err, engine.ErrBlobName) {
					t.Errorf("put %q: %v", bad, err)
				}
			}
			// Reopening finds the same store.
			if kind == "os" {
				s2, err := Open(s.Root(), nil)
				if err != nil || s2.StoreID() != s.StoreID() {
					t.Fatalf("reopen: %v", err)
				}
			}
		})
	}
}

// F1, F2, F6: conflict copies of every service, temp and staging files,
// hidden directories and case clashes are not listed; the copies (not the
// temp files) are offered for salvage.
func TestForeignNames(t *testing.T) {
	s, m := openMem(t)
	root := "/data/minca/"
	m.WriteFile(root+seg, []byte("real"))
	base := strings.TrimSuffix(seg, ".seg")
	copies := []string{
		base + " (Alice's conflicted copy 2026-01-02).seg", // Dropbox
		base + " (Case Conflict).seg",                      // Dropbox
		base + " (Unicode Encoding Conflict).seg",          // Dropbox
		base + " 2.seg", // iCloud
		base + ".sync-conflict-20260102-101010-ABCDEF7.seg",     // Syncthing
		base + "-DESKTOP-4F2.seg",                               // OneDrive
		base + " (1).seg",                                       // Google Drive
		strings.ToUpper(seg[:9]) + seg[9:],                      // case clash: SEGMENTS/…
		"segments 2/abcdefghijklmnopqrst/000000000001-0123.seg", // iCloud folder copy
	}
	temps := []string{
		"segments/abcdefghijklmnopqrst/.syncthing.000000000002-aa.seg.tmp",
		"segments/abcdefghijklmnopqrst/~syncthing~000000000002-aa.seg.tmp",
		"segments/abcdefghijklmnopqrst/.minca-0011223344556677.tmp",
		".dropbox.cache/segments/x.seg",
		".stversions/segments/abcdefghijklmnopqrst/000000000001-0123456789abcdef0123456789abcdef.seg",
		".Trash/x.seg",
		"segments/abcdefghijklmnopqrst/~$lock.seg",
	}
	for _, n := range append(append([]string{}, copies...), temps...) {
		m.WriteFile(root+n, []byte("copy"))
	}
	if got := names(t, s, "segments/"); len(got) != 1 || got[0] != seg {
		t.Fatalf("listed %v", got)
	}
	if got := names(t, s, ""); len(got) != 1 {
		t.Fatalf("listed from the root %v", got)
	}
	strays, err := s.Strays(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var sn []string
	for _, b := range strays {
		sn = append(sn, b.Name)
	}
	for _, c := range copies {
		found := false
		for _, n := range sn {
			found = found || n == c
		}
		if !found {
			t.Errorf("conflict copy %q not offered for salvage (got %v)", c, sn)
		}
	}
	for _, n := range sn {
		for _, tmp := range temps {
			if n == tmp {
				t.Errorf("temp file %q offered for salvage", n)
			}
		}
	}
	// A salvaged copy can be read.
	if b, err := s.Get(context.Background(), copies[0]); err != nil || string(b) != "copy" {
		t.Fatalf("get stray: %q %v", b, err)
	}
	if _, err := s.Get(context.Background(), "../etc/passwd"); !errors.Is(err, engine.ErrBlobName) {
		t.Fatalf("path escape: %v", err)
	}
}

// F3: placeholders are pending, never read (no forced download); a read
// failing with EDEADLK or EAGAIN is "not yet available".
func TestPlaceholders(t *testing.T) {
	m := NewMemFS()
	_ = m.MkdirAll("/data")
	f := &Faulty{FS: m}
	s, err := Open("/data/minca", &Options{FS: f, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	root := "/data/minca/"
	evicted := "segments/abcdefghijklmnopqrst/000000000002-00000000000000000000000000000000.seg"
	m.WriteFile(root+"segments/abcdefghijklmnopqrst/."+filepath.Base(evicted)+".icloud", []byte("bplist"))
	m.WriteFile(root+seg, []byte("dataless"))
	m.SetDataless(root+seg, true)
	got := names(t, s, "segments/")
	want := []string{seg + " (pending)", evicted + " (pending)"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("listed %v, want %v", got, want)
	}
	var reads int
	f.Fail = func(op Op, p string) error {
		if op == OpReadFile && strings.HasSuffix(p, ".seg") {
			reads++
		}
		return nil
	}
	for _, n := range []string{seg, evicted} {
		if _, err := s.Get(ctx, n); !errors.Is(err, engine.ErrBlobUnavailable) {
			t.Fatalf("get %s: %v", n, err)
		}
	}
	if reads != 0 {
		t.Fatalf("a placeholder was read (%d reads): that forces a download", reads)
	}
	// Deleting an evicted file deletes its stub.
	if err := s.Delete(ctx, evicted); err != nil {
		t.Fatal(err)
	}
	if got := names(t, s, "segments/"); len(got) != 1 || got[0] != seg+" (pending)" {
		t.Fatalf("after deleting the evicted file: %v", got)
	}
	// Downloaded: the same name reads.
	m.SetDataless(root+seg, false)
	if b, err := s.Get(ctx, seg); err != nil || string(b) != "dataless" {
		t.Fatalf("%q %v", b, err)
	}
	// Sonoma's dataless files on a filesystem that can't say so: the read fails.
	for _, errno := range []error{syscall.EDEADLK, syscall.EAGAIN} {
		f.Fail = func(op Op, p string) error {
			if op == OpReadFile && strings.HasSuffix(p, ".seg") {
				return &os.PathError{Op: "read", Path: p, Err: errno}
			}
			return nil
		}
		if _, err := s.Get(ctx, seg); !errors.Is(err, engine.ErrBlobUnavailable) {
			t.Fatalf("%v: %v", errno, err)
		}
	}
}

// F4: a crash or failure at any step of publishing leaves the name absent
// (or whole, when only the final directory sync failed), and no temp file.
func TestAtomicPublish(t *testing.T) {
	ctx := context.Background()
	data := bytes.Repeat([]byte("segment "), 1000)
	for _, op := range []Op{OpCreate, OpWrite, OpSync, OpRename, OpSyncDir} {
		for _, injected := range []error{errors.New("injected"), ErrTorn} {
			if injected == ErrTorn && op != OpWrite {
				continue
			}
			m := NewMemFS()
			f := &Faulty{FS: m}
			s, err := Open("/r", &Options{FS: f, Create: true})
			if err != nil {
				t.Fatal(err)
			}
			f.Fail = func(o Op, p string) error {
				if o == op && !strings.HasSuffix(p, "/segments") {
					return injected
				}
				return nil
			}
			err = s.Put(ctx, seg, data)
			if err == nil {
				t.Fatalf("%s: Put succeeded through an injected failure", op)
			}
			f.Fail = nil
			got, gerr := s.Get(ctx, seg)
			switch {
			case op == OpSyncDir:
				if gerr != nil || !bytes.Equal(got, data) {
					t.Fatalf("%s: after the rename the file must be whole: %v", op, gerr)
				}
			case !errors.Is(gerr, engine.ErrBlobNotFound):
				t.Fatalf("%s %v: a failed publish left %d bytes under the final name", op, injected, len(got))
			}
			for _, p := range m.Files() {
				if strings.Contains(p, ".minca-") {
					t.Fatalf("%s: temp file %s left behind", op, p)
				}
			}
			// And a retry publishes it.
			if op != OpSyncDir {
				if err := s.Put(ctx, seg, data); err != nil {
					t.Fatalf("%s: retry: %v", op, err)
				}
			}
		}
	}
}

// F10: a missing, emptied or unmarked folder is never taken for an empty
// store, and nothing is written into it.
func TestMissingOrEmptied(t *testing.T) {
	ctx := context.Background()
	m := NewMemFS()
	if _, err := Open("/data/minca", &Options{FS: m}); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("open missing without Create: %v", err)
	}
	if _, err := Open("/unplugged/drive/minca", &Options{FS: m, Create: true}); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("create under a missing parent: %v", err)
	}
	m.WriteFile("/data/lost/"+seg, []byte("x"))
	if _, err := Open("/data/lost", &Options{FS: m, Create: true}); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("adopting a folder with segments and no marker: %v", err)
	}
	s, err := Open("/data/minca", &Options{FS: m, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, seg, []byte("x")); err != nil {
		t.Fatal(err)
	}
	m.RemoveAll("/data/minca")
	if _, err := s.List(ctx, "segments/", "", 0); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("list of a removed folder: %v", err)
	}
	if err := s.Put(ctx, seg, []byte("x")); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("put into a removed folder: %v", err)
	}
	if err := s.Delete(ctx, seg); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("delete in a removed folder: %v", err)
	}
	if len(m.Files()) != 1 { // only /data/lost's file
		t.Fatalf("something was written: %v", m.Files())
	}
	// Emptied but present (a sync service deleting everything): the same.
	s2, err := Open("/data/other", &Options{FS: m, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	_ = m.Remove("/data/other/" + MarkerName)
	if _, err := s2.List(ctx, "", "", 0); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("list of an emptied folder: %v", err)
	}
}

// F9: the watcher signals on a change made by another process, and a burst
// of changes coalesces.
func TestWatch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, &Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch, err := s.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		if err := other.Put(ctx, fmt.Sprintf("segments/w/%012d-x.seg", i+1), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatal("no signal for 50 new files")
	}
	if _, err := (&Store{fs: NewMemFS()}).Watch(ctx); err == nil {
		t.Fatal("watching an in-memory filesystem should say it can't")
	}
}

func TestSweepTemp(t *testing.T) {
	s, m := openMem(t)
	m.WriteFile("/data/minca/segments/w/.minca-00.tmp", []byte("x"))
	m.WriteFile("/data/minca/segments/w/.syncthing.x.tmp", []byte("x"))
	n, err := s.SweepTemp(context.Background(), -time.Second)
	if err != nil || n != 1 {
		t.Fatalf("swept %d: %v", n, err)
	}
	for _, p := range m.Files() {
		if strings.Contains(p, ".minca-") {
			t.Fatal("our temp file is still there")
		}
	}
	if len(m.Files()) != 2 {
		t.Fatalf("another service's temp file was removed: %v", m.Files())
	}
}

// Paging through a listing reads the folder once; what a page missed (a
// name added behind the bound) the next listing finds.
func TestListPages(t *testing.T) {
	ctx := context.Background()
	s, _ := openMem(t)
	for i := 1; i <= 10; i += 2 {
		if err := s.Put(ctx, fmt.Sprintf("segments/w/%012d-x.seg", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	after := ""
	for {
		page, err := s.List(ctx, "segments/", after, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range page {
			got = append(got, b.Name)
			after = b.Name
		}
		if len(got) == 2 { // a name added during paging, behind the bound
			if err := s.Put(ctx, "segments/w/000000000002-x.seg", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
		if len(page) < 2 {
			break
		}
	}
	if len(got) != 5 {
		t.Fatalf("paged %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1] >= got[i] {
			t.Fatalf("pages out of order: %v", got)
		}
	}
	if all := names(t, s, "segments/"); len(all) != 6 {
		t.Fatalf("the next listing: %v", all)
	}
	// A listing that ended is not served again from what was kept: a name
	// added after the last page is found at once.
	if err := s.Put(ctx, "segments/w/000000000011-x.seg", []byte("x")); err != nil {
		t.Fatal(err)
	}
	page, err := s.List(ctx, "segments/", after, 2)
	if err != nil || len(page) != 1 || page[0].Name != "segments/w/000000000011-x.seg" {
		t.Fatalf("after the last page: %v %v", page, err)
	}
}

// F9: a storm of events makes one pending hint, Chmod storms none, and an
// overflow one; new directories get watched.
func TestWatchLoop(t *testing.T) {
	s, m := openMem(t)
	ctx, cancel := context.WithCancel(context.Background())
	events, errs := make(chan fsnotify.Event), make(chan error)
	ch := make(chan struct{}, 1)
	var dirs []string
	done := make(chan struct{})
	go func() {
		s.watchLoop(ctx, events, errs, ch, func(d string) { dirs = append(dirs, d) })
		close(done)
	}()
	for i := 0; i < 10_000; i++ {
		events <- fsnotify.Event{Name: "/data/minca/x", Op: fsnotify.Chmod}
	}
	if len(ch) != 0 {
		t.Fatal("a Chmod storm gave a hint")
	}
	for i := 0; i < 10_000; i++ {
		events <- fsnotify.Event{Name: "/data/minca/x", Op: fsnotify.Write}
	}
	if len(ch) != 1 {
		t.Fatalf("%d pending hints after 10,000 writes", len(ch))
	}
	<-ch
	errs <- fsnotify.ErrEventOverflow
	_ = m.MkdirAll("/data/minca/segments/newwriter")
	events <- fsnotify.Event{Name: "/data/minca/segments/newwriter", Op: fsnotify.Create}
	cancel()
	<-done
	if len(ch) != 1 {
		t.Fatal("an overflow gave no hint")
	}
	if len(dirs) != 1 || dirs[0] != "/data/minca/segments/newwriter" {
		t.Fatalf("new directories watched: %v", dirs)
	}
}

// F10: a folder inside two sync services' folders is found out.
func TestSyncServices(t *testing.T) {
	m := NewMemFS()
	_ = m.MkdirAll("/home/a/Dropbox/OneDrive - Work/minca")
	_ = m.MkdirAll("/home/a/sync/.stfolder")
	_ = m.MkdirAll("/home/a/sync/minca")
	for path, want := range map[string]string{
		"/home/a/Dropbox/OneDrive - Work/minca":                       "OneDrive,Dropbox",
		"/home/a/sync/minca":                                          "Syncthing",
		"/home/a/plain/minca":                                         "",
		"/Users/a/Library/Mobile Documents/com~apple~CloudDocs/minca": "iCloud Drive",
	} {
		if got := strings.Join(SyncServices(m, path), ","); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
}

func TestConformance(t *testing.T) {
	t.Run("mem", func(t *testing.T) {
		blobstest.Run(t, func(t *testing.T) engine.Blobs { s, _ := openMem(t); return s })
	})
	t.Run("os", func(t *testing.T) {
		blobstest.Run(t, func(t *testing.T) engine.Blobs {
			s, err := Open(filepath.Join(t.TempDir(), "store"), &Options{Create: true})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}
