package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"sync"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// FileRef is one file a version names in its files member: {hash, size},
// outside the body (02 §3.1). hash is the content id of the file's bytes.
type FileRef = record.File

// MaxFileSize is the largest size a files entry may name: the largest
// integer JSON carries exactly.
const MaxFileSize = record.MaxSafeInteger

// Errors of files, tested with errors.Is.
var (
	// ErrFileMismatch: a file's bytes do not hash to the name they were
	// put under, or are not the size named.
	ErrFileMismatch = errors.New("minca/engine: file bytes do not match their hash")
	// ErrFileBusy: the partial file is being written by another caller.
	ErrFileBusy = errors.New("minca/engine: the file is being fetched already")
	// ErrFileHeld: the file is held already; there is nothing to fetch.
	ErrFileHeld = errors.New("minca/engine: the file is held")
)

// fileValue is an 'f' value: uvarint size ‖ uvarint when it was recorded
// (Unix ms).
func fileValue(size int64, at time.Time) []byte {
	b := binary.AppendUvarint(nil, uint64(size))
	return binary.AppendUvarint(b, uint64(at.UnixMilli()))
}

func decodeFileValue(b []byte) (size int64, at time.Time, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > MaxFileSize {
		return 0, time.Time{}, Errorf(ErrCorrupt, "damaged: file entry")
	}
	ms, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 {
		return 0, time.Time{}, Errorf(ErrCorrupt, "damaged: file entry")
	}
	return int64(n), time.UnixMilli(int64(ms)), nil
}

// FileInfo is a held file: its name and size, and when it was recorded.
type FileInfo struct {
	FileRef
	Kept time.Time `json:"kept"`
}

// recordFile records d as held (size bytes). Callers at the same time
// share one synced batch (recordGroup): a node keeping many small files
// at once, from peers or uploads, waits for one sync, not one each.
func (s *Store) recordFile(d canonical.ID, size int64) error {
	r := &fileRecord{d: d, size: size, done: make(chan error, 1)}
	s.recording.Lock()
	s.recording.pending = append(s.recording.pending, r)
	lead := !s.recording.leading
	s.recording.leading = true
	s.recording.Unlock()
	if lead {
		for {
			s.recording.Lock()
			group := s.recording.pending
			s.recording.pending = nil
			if len(group) == 0 {
				s.recording.leading = false
				s.recording.Unlock()
				break
			}
			s.recording.Unlock()
			err := s.recordFiles(group)
			for _, g := range group {
				g.done <- err
			}
		}
	}
	return <-r.done
}

// recordGroup gathers the files to record while a batch of them commits:
// the caller that finds none committing leads, committing every file
// waiting, until none waits.
type recordGroup struct {
	sync.Mutex
	pending []*fileRecord
	leading bool
}

type fileRecord struct {
	d    canonical.ID
	size int64
	done chan error
}

// recordFiles records a group of files as held, in one synced batch with
// the counters; a file recorded already is nothing to do.
func (s *Store) recordFiles(group []*fileRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err // Close closed the KV holding mu
	}
	s.settle()
	b, err := s.kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	s.state.Lock()
	st := s.st
	s.state.Unlock()
	seen := map[canonical.ID]bool{}
	added := false
	for _, r := range group {
		if seen[r.d] {
			continue
		}
		seen[r.d] = true
		if _, err := s.kv.Get(keys.FileHeldKey(r.d)); err == nil {
			continue
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		if err := b.Set(keys.FileHeldKey(r.d), fileValue(r.size, s.now())); err != nil {
			return err
		}
		if err := s.lacksFile(b, r.d, true); err != nil {
			return err
		}
		st.stats.Files++
		st.stats.FileBytes += r.size
		added = true
	}
	if !added {
		return nil
	}
	// The files' names are made durable once for the group (FileDir),
	// before the batch that records them.
	if err := s.files().SyncKept(); err != nil {
		return fmt.Errorf("minca/engine: keep files: %w", err)
	}
	if err := b.Set(keys.InternalKey(stateName), st.encode()); err != nil {
		return err
	}
	if err := b.Commit(Sync); err != nil {
		return err
	}
	s.state.Lock()
	s.st = st
	s.fileKept.fire()
	s.state.Unlock()
	return nil
}

// FileKept returns a channel closed the next time a file is recorded as
// held, to wait for one without polling.
func (s *Store) FileKept() <-chan struct{} {
	s.state.Lock()
	defer s.state.Unlock()
	return s.fileKept.wait()
}

// FileNamed returns a channel closed the next time a version stored names
// a file the store does not hold: one to fetch (docs/sync.md §7.7).
func (s *Store) FileNamed() <-chan struct{} {
	s.state.Lock()
	defer s.state.Unlock()
	return s.fileNamed.wait()
}

// signal is a channel closed at the next event of one kind, made when
// someone first waits; the store's state lock guards it.
type signal struct{ c chan struct{} }

func (g *signal) wait() <-chan struct{} {
	if g.c == nil {
		g.c = make(chan struct{})
	}
	return g.c
}

func (g *signal) fire() {
	if g.c != nil {
		close(g.c)
		g.c = nil
	}
}

// writable fails on a store that refuses writes, before any file is
// written.
func (s *Store) writable() error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	b, err := s.kv.NewBatch()
	if err != nil {
		return err
	}
	return b.Close()
}

// FileWriter writes a new file into the store as a stream: Write its
// bytes, then Keep. Nothing of it is held until Keep returns.
type FileWriter struct {
	s    *Store
	t    FileTemp
	h    hash.Hash
	n    int64
	done bool
}

// CreateFile starts writing a new file (02 §3.1). The caller Closes it
// (after Keep, or to give up).
func (s *Store) CreateFile(ctx context.Context) (*FileWriter, error) {
	if err := s.writable(); err != nil {
		return nil, err
	}
	t, err := s.files().Create()
	if err != nil {
		return nil, fmt.Errorf("minca/engine: new file: %w", err)
	}
	return &FileWriter{s: s, t: t, h: sha256.New()}, nil
}

// Write adds bytes to the file.
func (w *FileWriter) Write(p []byte) (int, error) {
	if w.done {
		return 0, errTempClosed
	}
	n, err := w.t.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// Size is the bytes written so far.
func (w *FileWriter) Size() int64 { return w.n }

// Keep makes the file durable, keeps it under its content id and records
// it as held, and returns how a version names it.
func (w *FileWriter) Keep(ctx context.Context) (FileRef, error) {
	if w.done {
		return FileRef{}, errTempClosed
	}
	w.done = true
	ref := FileRef{Hash: canonical.ID(w.h.Sum(nil)), Size: w.n}
	if err := w.t.Keep(ref.Hash); err != nil {
		return FileRef{}, fmt.Errorf("minca/engine: keep file %s: %w", ref.Hash, err)
	}
	if err := w.s.recordFile(ref.Hash, w.n); err != nil {
		return FileRef{}, err
	}
	return ref, nil
}

// Close gives up a file not kept; after Keep it does nothing.
func (w *FileWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.t.Close()
}

// PutFile stores a file under its content id, which must be the id of data
// (02 §2): content-addressed, so putting it twice is harmless. Durable when
// it returns.
func (s *Store) PutFile(ctx context.Context, hash canonical.ID, data []byte) error {
	if canonical.IDOf(data) != hash {
		return fmt.Errorf("%w: %s", ErrFileMismatch, hash)
	}
	w, err := s.CreateFile(ctx)
	if err != nil {
		return err
	}
	defer w.Close()
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err = w.Keep(ctx)
	return err
}

// FileInfo returns a held file's size and when it was kept; ErrNotFound
// when it is not held.
func (s *Store) FileInfo(ctx context.Context, hash canonical.ID) (FileInfo, error) {
	if err := s.enter(); err != nil {
		return FileInfo{}, err
	}
	defer s.leave()
	b, err := s.kv.Get(keys.FileHeldKey(hash))
	if err != nil {
		return FileInfo{}, err
	}
	size, at, err := decodeFileValue(b)
	return FileInfo{FileRef: FileRef{Hash: hash, Size: size}, Kept: at}, err
}

// OpenFile opens a held file to read; ErrNotFound when it is not held. A
// held file whose bytes are gone is ErrCorrupt. The caller closes it.
func (s *Store) OpenFile(ctx context.Context, hash canonical.ID) (FileReader, error) {
	fi, err := s.FileInfo(ctx, hash)
	if err != nil {
		return nil, err
	}
	r, err := s.files().Open(hash)
	if errors.Is(err, ErrNotFound) {
		return nil, Errorf(ErrCorrupt, "damaged: file %s is recorded as held, and its bytes are gone", hash)
	}
	if err != nil {
		return nil, fmt.Errorf("minca/engine: file %s: %w", hash, err)
	}
	if r.Size() != fi.Size {
		r.Close()
		return nil, Errorf(ErrCorrupt, "damaged: file %s holds %d bytes, recorded %d", hash, r.Size(), fi.Size)
	}
	return r, nil
}

// File returns a file's bytes whole; ErrNotFound when not held. For
// small files: OpenFile streams.
func (s *Store) File(ctx context.Context, hash canonical.ID) ([]byte, error) {
	r, err := s.OpenFile(ctx, hash)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	out := make([]byte, r.Size())
	if n, err := r.ReadAt(out, 0); n < len(out) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("minca/engine: file %s: %w", hash, err)
	}
	return out, nil
}

// HasFile reports whether a file is held.
func (s *Store) HasFile(ctx context.Context, hash canonical.ID) (bool, error) {
	_, err := s.FileInfo(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Files lists the held files in content id order.
func (s *Store) Files(ctx context.Context, yield func(FileInfo) bool) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	it, err := s.kv.NewIter([]byte{keys.FileHeld}, []byte{keys.FileHeld + 1})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		if err := s.stop(ctx); err != nil {
			return err
		}
		k := it.Key()
		if len(k) != 33 {
			return Errorf(ErrCorrupt, "damaged: file entry key")
		}
		size, at, err := decodeFileValue(it.Value())
		if err != nil {
			return err
		}
		if !yield(FileInfo{FileRef: FileRef{Hash: canonical.ID(k[1:]), Size: size}, Kept: at}) {
			return nil
		}
	}
	return it.Err()
}

// DeleteFile lets a held file go: it is no longer recorded, then its bytes
// are removed. Not held is nothing to do.
func (s *Store) DeleteFile(ctx context.Context, hash canonical.ID) error {
	fi, err := s.FileInfo(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.unrecordFile(hash, fi.Size); err != nil {
		return err
	}
	return s.files().Remove(hash)
}

func (s *Store) unrecordFile(d canonical.ID, size int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil {
		return err // Close closed the KV holding mu
	}
	s.settle()
	b, err := s.kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	if err := b.Delete(keys.FileHeldKey(d)); err != nil {
		return err
	}
	if err := s.lacksFile(b, d, false); err != nil {
		return err
	}
	s.state.Lock()
	st := s.st
	s.state.Unlock()
	st.stats.Files--
	st.stats.FileBytes -= size
	if err := b.Set(keys.InternalKey(stateName), st.encode()); err != nil {
		return err
	}
	if err := b.Commit(Sync); err != nil {
		return err
	}
	s.state.Lock()
	s.st = st
	s.state.Unlock()
	return nil
}

// files is the store's FileDir.
func (s *Store) files() FileDir { return s.opts.Files }
