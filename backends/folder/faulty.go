package folder

import (
	"errors"
	"sync/atomic"
)

// Op names an operation of an [FS], for [Faulty].
type Op string

// The operations a [Faulty] can fail.
const (
	OpReadDir  Op = "readdir"
	OpReadFile Op = "readfile"
	OpStat     Op = "stat"
	OpCreate   Op = "create"
	OpWrite    Op = "write"
	OpSync     Op = "sync"
	OpRename   Op = "rename"
	OpRemove   Op = "remove"
	OpMkdir    Op = "mkdir"
	OpSyncDir  Op = "syncdir"
)

// ErrTorn, returned by a [Faulty]'s Fail for OpWrite, writes half the bytes
// before failing: a write cut off by a crash or a full disk.
var ErrTorn = errors.New("folder: injected torn write")

// Faulty wraps an FS and fails the operations Fail says to, for tests of
// what the store does when a disk or a sync service misbehaves. Fail is
// called before each operation with its path (the source, for Rename); a
// non-nil result is returned instead of doing it.
type Faulty struct {
	FS
	Fail func(op Op, path string) error
	// Calls counts operations, failed or not.
	Calls atomic.Int64
}

var _ FS = (*Faulty)(nil)

func (f *Faulty) fail(op Op, p string) error {
	f.Calls.Add(1)
	if f.Fail == nil {
		return nil
	}
	return f.Fail(op, p)
}

func (f *Faulty) ReadDir(dir string) ([]Entry, error) {
	if err := f.fail(OpReadDir, dir); err != nil {
		return nil, err
	}
	return f.FS.ReadDir(dir)
}

func (f *Faulty) ReadFile(name string) ([]byte, error) {
	if err := f.fail(OpReadFile, name); err != nil {
		return nil, err
	}
	return f.FS.ReadFile(name)
}

func (f *Faulty) Stat(name string) (Entry, error) {
	if err := f.fail(OpStat, name); err != nil {
		return Entry{}, err
	}
	return f.FS.Stat(name)
}

func (f *Faulty) Create(name string) (File, error) {
	if err := f.fail(OpCreate, name); err != nil {
		return nil, err
	}
	w, err := f.FS.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultyFile{File: w, f: f, name: name}, nil
}

func (f *Faulty) Rename(from, to string) error {
	if err := f.fail(OpRename, from); err != nil {
		return err
	}
	return f.FS.Rename(from, to)
}

func (f *Faulty) Remove(name string) error {
	if err := f.fail(OpRemove, name); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

func (f *Faulty) MkdirAll(dir string) error {
	if err := f.fail(OpMkdir, dir); err != nil {
		return err
	}
	return f.FS.MkdirAll(dir)
}

func (f *Faulty) SyncDir(dir string) error {
	if err := f.fail(OpSyncDir, dir); err != nil {
		return err
	}
	return f.FS.SyncDir(dir)
}

type faultyFile struct {
	File
	f    *Faulty
	name string
}

func (w *faultyFile) Write(p []byte) (int, error) {
	if err := w.f.fail(OpWrite, w.name); err != nil {
		if errors.Is(err, ErrTorn) {
			n, _ := w.File.Write(p[:len(p)/2])
			return n, err
		}
		return 0, err
	}
	return w.File.Write(p)
}

func (w *faultyFile) Sync() error {
	if err := w.f.fail(OpSync, w.name); err != nil {
		return err
	}
	return w.File.Sync()
}
