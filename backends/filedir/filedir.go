// Package filedir is an [engine.FileDir] in a directory of the local disk:
// where a pebble:, sqlite: or folder:/s3:// store keeps the bytes of the
// files its versions name (02 §3.1; docs/stores.md, Files).
//
//	DIR/<hash>           a kept file, named by its content id
//	DIR/partial/<hash>   a file being fetched, its bytes so far
//	DIR/tmp/<random>     a file being written
//
// Nothing is made until the first file is written, so a store opened to
// read makes no directory. A file is written and synced, renamed into
// place, and the directory synced (SyncKept, once for the files a store
// records together), before the store records it as held.
package filedir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unsafe"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
)

// Dir is a FileDir rooted at a directory.
type Dir struct {
	root string
	// disk holds a slot for each call that may block its thread on the
	// disk for long (a file's sync, and the open, close and rename around
	// it): see maxDiskCalls.
	disk chan struct{}
	// sync syncs a file: (*os.File).Sync but for tests.
	sync func(*os.File) error
}

// maxDiskCalls is how many of a Dir's file syncs (with the opens, closes
// and renames beside them) run at once; the others wait for a slot. A Go
// program blocked in a system call holds an OS thread, and the runtime
// starts another to run the rest: a node keeping 256 small files from a
// peer at once (docs/sync.md §7.7) had 256 syncs blocked, ~200 threads
// more, each with its stacks (15 MiB of the receiver's resident memory,
// bench/REPORT-files.md). A goroutine waiting for a slot holds no thread.
// Eight syncs at once keep the disk as busy as 256: the file system's
// journal commits the syncs waiting together as one, and 4,096 files of
// 4 KiB written, synced and renamed by 256 goroutines went at 1,233
// files a second with 8 syncs at once, 1,249 with 16, 1,180 with 32 and
// 1,044 with 256 (medians of 3, this project's VM).
const maxDiskCalls = 8

// Open returns the FileDir at root (made when the first file is written).
func Open(root string) *Dir {
	return &Dir{root: root, disk: make(chan struct{}, maxDiskCalls), sync: (*os.File).Sync}
}

// held runs fn in one of the Dir's disk slots.
func (d *Dir) held(fn func() error) error {
	d.disk <- struct{}{}
	defer func() { <-d.disk }()
	return fn()
}

// Root is the directory.
func (d *Dir) Root() string { return d.root }

func (d *Dir) partialDir() string { return filepath.Join(d.root, "partial") }
func (d *Dir) tmpDir() string     { return filepath.Join(d.root, "tmp") }

type temp struct {
	d       *Dir
	f       *os.File
	path    string
	partial bool
	size    int64
	closed  bool
	// flushed is where the disk writes were last started up to
	// (writebackEvery); writeback starts them, startWriteback but for
	// tests.
	flushed   int64
	writeback func(f *os.File, off, n int64)
	// A partial file's pages are dropped from the cache a span behind
	// the writes started (dropBehind, but for tests), up to dropped.
	dropped int64
	drop    func(f *os.File, off, n int64)
	// cached: bytes went through the page cache since the last span's
	// writes were started; cachedBehind: in the span before it. Spans
	// written past the cache (direct) have nothing to start or drop.
	cached, cachedBehind bool
	// direct is the partial file opened a second time, to write whole
	// blocks past the page cache (openDirect); nil until the first such
	// write, and noDirect once the file system refused it.
	direct   *os.File
	noDirect bool
}

// directBlock is the boundary of memory, of the file and of length a
// write past the page cache keeps to (O_DIRECT: a disk's logical block,
// 4 KiB on every disk of today); directFrom the least such a write is (a
// small file's write, synced at once, gains nothing by it).
const (
	directBlock = 4 << 10
	directFrom  = 64 << 10
)

// writebackEvery is how many bytes a file being written gathers before
// the disk is asked to start writing them, without waiting: a file
// arriving at network speed is then on disk as it arrives, and the sync
// that keeps it waits for its last few MiB, not for all of it (a 256 MiB
// file: 0.2 s less on a disk that writes 1 GB/s). The sync is still
// what makes it durable.
//
// A partial file (one arriving from a peer, docs/sync.md §7.7) then has
// the span started before waited for and dropped from the page cache
// (dropBehind), so it holds at most two spans of cache however large it
// grows, and its next writes reuse the pages just dropped.
const writebackEvery = 8 << 20

// Create starts a new temporary file.
func (d *Dir) Create() (engine.FileTemp, error) {
	var t *temp
	err := d.held(func() error {
		if err := os.MkdirAll(d.tmpDir(), 0o700); err != nil {
			return err
		}
		var r [12]byte
		rand.Read(r[:])
		p := filepath.Join(d.tmpDir(), hex.EncodeToString(r[:]))
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return err
		}
		t = &temp{d: d, f: f, path: p, writeback: startWriteback}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Partial opens file's partial file to append to.
func (d *Dir) Partial(file canonical.ID) (engine.FileTemp, error) {
	var t *temp
	err := d.held(func() error {
		if err := os.MkdirAll(d.partialDir(), 0o700); err != nil {
			return err
		}
		p := filepath.Join(d.partialDir(), file.String())
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return err
		}
		if _, err := f.Seek(0, 2); err != nil {
			f.Close()
			return err
		}
		// What a partial held was synced when it was closed.
		t = &temp{d: d, f: f, path: p, partial: true, size: fi.Size(), flushed: fi.Size(), writeback: startWriteback, dropped: fi.Size(), drop: dropBehind}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func (t *temp) Write(p []byte) (int, error) { return t.WriteV([][]byte{p}) }

// WriteV appends the bytes of bs in order ([engine.VectorWriter]): with
// one write past the page cache when every one of them is whole blocks
// on a block's boundary (write), else one after another.
func (t *temp) WriteV(bs [][]byte) (int, error) {
	n, err := t.write(bs)
	t.size += int64(n)
	if t.size-t.flushed >= writebackEvery {
		if t.cached {
			t.writeback(t.f, t.flushed, t.size-t.flushed)
		}
		if t.drop != nil && t.flushed > t.dropped {
			if t.cachedBehind {
				t.drop(t.f, t.dropped, t.flushed-t.dropped)
			}
			t.dropped = t.flushed
		}
		t.cachedBehind, t.cached = t.cached, false
		t.flushed = t.size
	}
	return n, err
}

// write writes p at the file's end. A partial file's whole blocks, from
// a buffer on a block's boundary (a chunk from a peer, which the
// transport reads so: docs/sync.md §7.7), go past the page cache: the
// copy into the cache was the receiving end's largest cost after the
// hash, and a file arriving from a peer is not read again soon. Other
// bytes, and every byte where the file system refuses it, go through
// the cache. Either way Keep's sync makes them durable.
func (t *temp) write(bs [][]byte) (int, error) {
	n := 0
	for len(bs) > 0 {
		at := t.size + int64(n)
		// A run of whole blocks on a block's boundary, from here on, goes
		// past the cache with one write: a FILE-DATA cut short by the
		// credit (whole blocks too, but under directFrom) goes through
		// the cache alone, not the chunks around it.
		k, run := 0, 0
		if t.partial && !t.noDirect && at%directBlock == 0 {
			for k < len(bs) && wholeBlocks(bs[k]) {
				run += len(bs[k])
				k++
			}
		}
		if run >= directFrom {
			if m, ok, err := t.writeDirect(bs[:k], at); ok {
				n += m
				if err != nil {
					return n, err
				}
				bs = bs[k:]
				continue
			}
		}
		t.cached = true
		m, err := t.f.WriteAt(bs[0], at)
		n += m
		if err != nil {
			return n, err
		}
		bs = bs[1:]
	}
	return n, nil
}

// writeDirect writes bs at off past the page cache; false when the file
// system refuses it (nothing written), and from then on.
func (t *temp) writeDirect(bs [][]byte, off int64) (int, bool, error) {
	if t.direct == nil {
		f, err := openDirect(t.path)
		if err != nil {
			t.noDirect = true
			return 0, false, nil
		}
		t.direct = f
	}
	n, err := writeDirect(t.direct, bs, off)
	if n > 0 || !errors.Is(err, syscall.EINVAL) {
		return n, true, err
	}
	// Opened, and then refused (a file system that takes the flag and
	// not the write): through the cache from now on.
	t.closeDirect()
	t.noDirect = true
	return 0, false, nil
}

// wholeBlocks reports whether p is whole blocks starting on a block's
// boundary of memory.
func wholeBlocks(p []byte) bool {
	return len(p) > 0 && len(p)%directBlock == 0 && uintptr(unsafe.Pointer(&p[0]))%directBlock == 0
}

// closeDirect closes the file's second opening, if any.
func (t *temp) closeDirect() {
	if t.direct != nil {
		t.direct.Close()
		t.direct = nil
	}
}

func (t *temp) ReadAt(p []byte, off int64) (int, error) { return t.f.ReadAt(p, off) }
func (t *temp) Size() int64                             { return t.size }
func (t *temp) Sync() error                             { return t.d.held(func() error { return t.d.sync(t.f) }) }

func (t *temp) Keep(file canonical.ID) error {
	if t.closed {
		return os.ErrClosed
	}
	t.closed = true
	t.closeDirect()
	return t.d.held(func() error {
		err := t.d.sync(t.f)
		if cerr := t.f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(t.path, filepath.Join(t.d.root, file.String()))
		}
		if err != nil && !t.partial {
			os.Remove(t.path)
		}
		return err
	})
}

// SyncKept syncs the directory of kept files, making their names durable.
func (d *Dir) SyncKept() error { return syncDir(d.root) }

func (t *temp) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	t.closeDirect()
	return t.d.held(func() error {
		err := t.f.Close()
		if !t.partial {
			os.Remove(t.path)
		}
		return err
	})
}

type reader struct {
	*os.File
	size int64
}

func (r reader) Size() int64 { return r.size }

// Open opens the kept file.
func (d *Dir) Open(file canonical.ID) (engine.FileReader, error) {
	f, err := os.Open(filepath.Join(d.root, file.String()))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: file %s", engine.ErrNotFound, file)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return reader{f, fi.Size()}, nil
}

func remove(p string) error {
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Remove removes the kept file.
func (d *Dir) Remove(file canonical.ID) error {
	return remove(filepath.Join(d.root, file.String()))
}

// RemovePartial removes file's partial file.
func (d *Dir) RemovePartial(file canonical.ID) error {
	return remove(filepath.Join(d.partialDir(), file.String()))
}

// RemoveTemp removes a temporary file List named.
func (d *Dir) RemoveTemp(name string) error {
	if strings.ContainsAny(name, `/\`) || name == "" || name == "." || name == ".." {
		return fmt.Errorf("minca/filedir: %q is not a temporary file's name", name)
	}
	return remove(filepath.Join(d.tmpDir(), name))
}

// List calls fn for every kept, partial and temporary file; names that
// are not ours are left out. Each directory is read listPage entries at
// a time, in the order the file system keeps them, so listing a store of
// 262,144 files holds a page of their names, not all of them; fn may
// remove the file it is called for.
func (d *Dir) List(fn func(engine.FileEntry) error) error {
	for _, part := range []struct {
		dir  string
		kind engine.FileKind
	}{{d.root, engine.FileKept}, {d.partialDir(), engine.FilePartial}, {d.tmpDir(), engine.FileTempKind}} {
		if err := listDir(part.dir, part.kind, fn); err != nil {
			return err
		}
	}
	return nil
}

// listPage is how many entries List reads from a directory at a time.
const listPage = 256

func listDir(dir string, kind engine.FileKind, fn func(engine.FileEntry) error) error {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		es, err := f.ReadDir(listPage)
		for _, e := range es {
			if e.IsDir() {
				continue
			}
			// A kept or partial file's name is its content id, read
			// here; a name that is none is not ours.
			var file canonical.ID
			if kind != engine.FileTempKind {
				var ok bool
				if file, ok = canonical.ParseExactID(e.Name()); !ok {
					continue
				}
			}
			fi, ierr := e.Info()
			if errors.Is(ierr, fs.ErrNotExist) {
				continue
			}
			if ierr != nil {
				return ierr
			}
			if ferr := fn(engine.FileEntry{File: file, Name: e.Name(), Kind: kind, Size: fi.Size(), ModTime: fi.ModTime()}); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil // some filesystems cannot sync a directory
	}
	return err
}
