package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
)

// FileDir is where a store keeps its files' bytes (02 §3.1 files;
// docs/stores.md, Files): one file each, named by its content id, beside
// the KV that records which are held. backends/filedir keeps them in a
// directory; a store opened without one keeps them in memory.
//
// A file is written under a temporary name or as a partial file, then
// kept under its name; a store records it as held only once [FileTemp.Keep]
// returned. Implementations are safe for concurrent use; each FileTemp is
// used from one goroutine.
type FileDir interface {
	// Create starts a new temporary file.
	Create() (FileTemp, error)
	// Partial opens the partial file of file to append to, made empty
	// when there is none; its Size is the bytes it holds.
	Partial(file canonical.ID) (FileTemp, error)
	// Open opens the kept file: an error wrapping [ErrNotFound] when
	// there is none.
	Open(file canonical.ID) (FileReader, error)
	// Remove removes the kept file; RemovePartial its partial file.
	// Removing what is not there is not an error.
	Remove(file canonical.ID) error
	RemovePartial(file canonical.ID) error
	// List calls fn for every kept, partial and temporary file.
	List(fn func(FileEntry) error) error
	// RemoveTemp removes a temporary file List named.
	RemoveTemp(name string) error
	// SyncKept makes durable the names of the files kept so far: a store
	// calls it once for the files it records together, before it records
	// them, so many files kept at once share one directory sync.
	SyncKept() error
}

// FileTemp is a file being written: a temporary or a partial file.
type FileTemp interface {
	io.Writer
	io.ReaderAt
	// Size is the bytes the file holds.
	Size() int64
	// Sync makes what was written durable.
	Sync() error
	// Keep makes the file's bytes durable and keeps them as the file
	// named (replacing one there: the name says the content); the name is
	// durable once the FileDir's SyncKept returns. The FileTemp is closed.
	Keep(file canonical.ID) error
	// Close closes the file. A temporary file not kept is removed; a
	// partial file keeps what was written.
	Close() error
}

// FileReader reads a kept file.
type FileReader interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// FileEntry is one file a FileDir lists.
type FileEntry struct {
	// File is a kept or partial file's name, read from where the FileDir
	// keeps it; Name is a temporary file's (for RemoveTemp).
	File    canonical.ID
	Name    string
	Kind    FileKind
	Size    int64
	ModTime time.Time
}

// FileKind is what a listed file is.
type FileKind uint8

// The kinds of files a FileDir holds.
const (
	FileKept FileKind = iota
	FilePartial
	FileTempKind
)

// memFiles is a FileDir in memory: the store of memory: and of tests.
type memFiles struct {
	mu      sync.Mutex
	kept    map[canonical.ID][]byte
	partial map[canonical.ID]*[]byte
	temps   map[string]*[]byte
	next    int
	now     func() time.Time
}

// NewMemoryFiles returns a FileDir that keeps files in memory.
func NewMemoryFiles() FileDir {
	return &memFiles{kept: map[canonical.ID][]byte{}, partial: map[canonical.ID]*[]byte{}, temps: map[string]*[]byte{}, now: time.Now}
}

type memTemp struct {
	d       *memFiles
	file    canonical.ID // a partial's
	name    string       // a temp's
	partial bool
	b       *[]byte
	closed  bool
}

func (d *memFiles) Create() (FileTemp, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	b := new([]byte)
	name := fmt.Sprintf("tmp%d", d.next)
	d.temps[name] = b
	return &memTemp{d: d, name: name, b: b}, nil
}

func (d *memFiles) Partial(file canonical.ID) (FileTemp, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.partial[file]
	if !ok {
		b = new([]byte)
		d.partial[file] = b
	}
	return &memTemp{d: d, file: file, partial: true, b: b}, nil
}

func (d *memFiles) Open(file canonical.ID) (FileReader, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b, ok := d.kept[file]
	if !ok {
		return nil, fmt.Errorf("%w: file %s", ErrNotFound, file)
	}
	return memReader{bytes.NewReader(b)}, nil
}

func (d *memFiles) Remove(file canonical.ID) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.kept, file)
	return nil
}

func (d *memFiles) RemovePartial(file canonical.ID) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.partial, file)
	return nil
}

func (d *memFiles) RemoveTemp(name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.temps, name)
	return nil
}

func (d *memFiles) List(fn func(FileEntry) error) error {
	d.mu.Lock()
	var es []FileEntry
	for f, b := range d.kept {
		es = append(es, FileEntry{File: f, Name: f.String(), Kind: FileKept, Size: int64(len(b)), ModTime: d.now()})
	}
	for f, b := range d.partial {
		es = append(es, FileEntry{File: f, Name: f.String(), Kind: FilePartial, Size: int64(len(*b)), ModTime: d.now()})
	}
	for n, b := range d.temps {
		es = append(es, FileEntry{Name: n, Kind: FileTempKind, Size: int64(len(*b)), ModTime: d.now()})
	}
	d.mu.Unlock()
	sort.Slice(es, func(i, j int) bool { return es[i].Name < es[j].Name })
	for _, e := range es {
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

var errTempClosed = errors.New("minca/engine: file closed")

func (t *memTemp) Write(p []byte) (int, error) {
	if t.closed {
		return 0, errTempClosed
	}
	t.d.mu.Lock()
	*t.b = append(*t.b, p...)
	t.d.mu.Unlock()
	return len(p), nil
}

func (t *memTemp) ReadAt(p []byte, off int64) (int, error) {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	return bytes.NewReader(*t.b).ReadAt(p, off)
}

func (t *memTemp) Size() int64 {
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	return int64(len(*t.b))
}

func (t *memTemp) Sync() error { return nil }

func (d *memFiles) SyncKept() error { return nil }

func (t *memTemp) Keep(file canonical.ID) error {
	if t.closed {
		return errTempClosed
	}
	t.closed = true
	t.d.mu.Lock()
	defer t.d.mu.Unlock()
	t.d.kept[file] = *t.b
	if t.partial {
		delete(t.d.partial, t.file)
	} else {
		delete(t.d.temps, t.name)
	}
	return nil
}

func (t *memTemp) Close() error {
	if t.closed {
		return nil
	}
	t.closed = true
	if !t.partial {
		t.d.mu.Lock()
		delete(t.d.temps, t.name)
		t.d.mu.Unlock()
	}
	return nil
}

type memReader struct{ *bytes.Reader }

func (memReader) Close() error { return nil }
