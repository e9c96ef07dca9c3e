package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// FileRef is one file a version names in its files member: {hash, size},
// outside the body (02 §3.1). hash is the content id of the file's bytes.
type FileRef struct {
	Hash string
	Size int64
}

// FilesOf returns the files a version names. Malformed entries are skipped:
// files is never a reason to refuse a version (02 §3.1).
func FilesOf(v *record.Version) []FileRef {
	val, ok := v.Get("files")
	arr, _ := val.([]any)
	if !ok {
		return nil
	}
	var out []FileRef
	for _, e := range arr {
		o, ok := e.(*canonical.Object)
		if !ok {
			continue
		}
		h, _ := o.Get("hash")
		sz, _ := o.Get("size")
		hs, ok1 := h.(string)
		n, ok2 := sz.(float64)
		if ok1 && ok2 && n >= 0 && n == float64(int64(n)) {
			out = append(out, FileRef{Hash: hs, Size: int64(n)})
		}
	}
	return out
}

// ErrFileMismatch: a file's bytes do not hash to the name it was put under.
var ErrFileMismatch = errors.New("minca/engine: file bytes do not match their hash")

// PutFile stores a file under its content id, which must be the id of data
// (02 §2): content-addressed, so putting it twice is harmless. Durable when
// it returns.
func (s *Store) PutFile(ctx context.Context, hash string, data []byte) error {
	if err := s.check(); err != nil {
		return err
	}
	d, ok := keys.ParseExact(hash)
	if !ok || canonical.IDOf(data) != d {
		return fmt.Errorf("%w: %s", ErrFileMismatch, hash)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settle()
	b, err := s.kv.NewBatch()
	if err != nil {
		return err
	}
	defer b.Close()
	if _, err := s.kv.Get(keys.FileKey(d)); err == nil {
		return nil
	} else if !errors.Is(err, ErrNotFound) {
		return err
	}
	if err := b.Set(keys.FileKey(d), data); err != nil {
		return err
	}
	s.state.Lock()
	st := s.st
	s.state.Unlock()
	st.stats.Files++
	st.stats.FileBytes += int64(len(data))
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

// File returns a file's bytes; ErrNotFound when not held.
func (s *Store) File(ctx context.Context, hash string) ([]byte, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	d, ok := keys.ParseExact(hash)
	if !ok {
		return nil, fmt.Errorf("%w: file %q", ErrNotFound, hash)
	}
	return s.kv.Get(keys.FileKey(d))
}

// HasFile reports whether a file is held.
func (s *Store) HasFile(ctx context.Context, hash string) (bool, error) {
	_, err := s.File(ctx, hash)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}
