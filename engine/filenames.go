package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// NamedFile is a file a version held whole names (docs/sync.md §7.7: the
// files a node holds).
type NamedFile struct {
	FileRef
	Space   string
	Version canonical.ID // a version naming it
}

// filesMember is how a version's canonical JSON names files: a version
// without it is passed over without being parsed.
var filesMember = []byte(`"files":`)

// NamedFiles calls yield for each file named by a version the store holds
// whole (its body kept: current, first standing, retained), in space, or
// in every space when space is "". A file named by several versions comes
// once for each. It reads the files index ('n'), not the versions, and
// calls yield with no iterator open.
func (s *Store) NamedFiles(ctx context.Context, space string, yield func(NamedFile) bool) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if s.filesUnindexed {
		return s.namedFilesByScan(ctx, space, yield)
	}
	lo, hi := []byte{keys.FileNamed}, []byte{keys.FileNamed + 1}
	for {
		page, next, err := s.namedPage(lo, hi, space)
		if err != nil {
			return err
		}
		for _, f := range page {
			if err := s.stop(ctx); err != nil {
				return err
			}
			if !yield(f) {
				return nil
			}
		}
		if next == nil {
			return nil
		}
		lo = next
	}
}

// NamingFile finds a version held whole in space that names the file
// hash, as NamedFiles would list it: false when none does. It reads the
// files index's entries of that file alone, so asking for one file costs
// the same in a store naming a million as in one naming ten.
func (s *Store) NamingFile(ctx context.Context, space string, hash canonical.ID) (NamedFile, bool, error) {
	if err := s.enter(); err != nil {
		return NamedFile{}, false, err
	}
	defer s.leave()
	if s.filesUnindexed {
		var found NamedFile
		ok := false
		err := s.namedFilesByScan(ctx, space, func(f NamedFile) bool {
			found, ok = f, f.Hash == hash
			return !ok
		})
		return found, ok, err
	}
	tag := keys.SpaceTag(space)
	p := append(append([]byte{keys.FileNamed}, hash[:]...), tag[:]...)
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return NamedFile{}, false, err
	}
	defer it.Close()
	for it.Next() {
		k := it.Key()
		if len(k) != 1+32+keys.SpaceLen+32 {
			return NamedFile{}, false, Errorf(ErrCorrupt, "damaged: files index key")
		}
		size, sp, err := decodeFileName(it.Value())
		if err != nil {
			return NamedFile{}, false, err
		}
		if sp != space {
			continue // another space whose tag is the same
		}
		vd, _ := keys.Digest(k, len(p))
		return NamedFile{FileRef: FileRef{Hash: hash, Size: size}, Space: sp, Version: vd}, true, nil
	}
	return NamedFile{}, false, it.Err()
}

// namedPage reads 'n' entries in [lo, hi) up to missingPage of them in
// space ("": every space); next is where the following page starts, nil
// at the end.
func (s *Store) namedPage(lo, hi []byte, space string) (page []NamedFile, next []byte, err error) {
	it, err := s.kv.NewIter(lo, hi)
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	var tag [keys.SpaceLen]byte
	if space != "" {
		tag = keys.SpaceTag(space)
	}
	for it.Next() {
		k := it.Key()
		if len(k) != 1+32+keys.SpaceLen+32 {
			return nil, nil, Errorf(ErrCorrupt, "damaged: files index key")
		}
		if space != "" && !bytes.Equal(k[33:33+keys.SpaceLen], tag[:]) {
			continue
		}
		size, sp, err := decodeFileName(it.Value())
		if err != nil {
			return nil, nil, err
		}
		fd, _ := keys.Digest(k, 1)
		vd, _ := keys.Digest(k, 1+32+keys.SpaceLen)
		page = append(page, NamedFile{FileRef: FileRef{Hash: fd, Size: size}, Space: sp, Version: vd})
		if len(page) == missingPage {
			return page, append(bytes.Clone(k), 0), it.Err()
		}
	}
	return page, nil, it.Err()
}

// namedFilesByScan is NamedFiles by reading every version held whole: it
// builds the files index of a store of an earlier layout (indexFiles), and
// serves a store of an earlier layout open read-only, which has none.
func (s *Store) namedFilesByScan(ctx context.Context, space string, yield func(NamedFile) bool) error {
	it, err := s.kv.NewIter([]byte{keys.Version}, []byte{keys.Version + 1})
	if err != nil {
		return err
	}
	defer it.Close()
	for it.Next() {
		if err := s.stop(ctx); err != nil {
			return err
		}
		k := it.Key()
		if len(k) != 9 {
			return Errorf(ErrCorrupt, "damaged: version value key %x", k)
		}
		env, body, err := readValue(s.kv, binary.BigEndian.Uint64(k[1:]), it.Value())
		if errors.Is(err, errAstray) || errors.Is(err, errNoCurrent) {
			continue // names no file; Check names the damage
		}
		if err != nil {
			return err
		}
		if body == nil || !bytes.Contains(env, filesMember) {
			continue
		}
		v, err := storedStub(env)
		if err != nil {
			return err
		}
		if space != "" && v.Space != space {
			continue
		}
		id, _ := v.Digest()
		for _, f := range v.Files {
			if !yield(NamedFile{FileRef: f, Space: v.Space, Version: id}) {
				return nil
			}
		}
	}
	return it.Err()
}

// TidyFilesResult is what TidyFiles did.
type TidyFilesResult struct {
	Deleted      int   `json:"deleted"`      // held files no version held whole names
	DeletedBytes int64 `json:"deletedBytes"` // their bytes
	Removed      int   `json:"removed"`      // files left by a crash: temporary, partial nothing names, never recorded
}

// TidyFiles deletes the held files that no version held whole names and
// that were kept more than grace before now, and removes what a crash or
// a fetch given up left in the FileDir (temporary files, partial files no
// version held whole names, kept bytes never recorded) older than grace
// (docs/stores.md, Files). The grace keeps an upload waiting for the
// version that will name it, and a file a reader has open.
func (s *Store) TidyFiles(ctx context.Context, grace time.Duration) (TidyFilesResult, error) {
	var res TidyFilesResult
	if err := s.enter(); err != nil {
		return res, err
	}
	defer s.leave()
	if err := s.writable(); err != nil {
		return res, err
	}
	before := s.now().Add(-grace)
	// The held files are read a page at a time, each looked up in the
	// files index: nothing here grows with the files the store holds (a
	// set of every file named, 262,144 of them, was tens of MB held for
	// the minutes a tidy takes, bench/REPORT-files.md).
	lo := []byte{keys.FileHeld}
	for {
		page, next, err := s.heldPage(ctx, lo)
		if err != nil {
			return res, err
		}
		for _, fi := range page {
			if !fi.Kept.Before(before) {
				continue
			}
			named, err := s.isFileNamed(ctx, fi.Hash)
			if err != nil {
				return res, err
			}
			if named {
				continue
			}
			if err := s.DeleteFile(ctx, fi.Hash); err != nil {
				return res, err
			}
			res.Deleted++
			res.DeletedBytes += fi.Size
		}
		if next == nil {
			break
		}
		lo = next
	}
	dir := s.files()
	err := dir.List(func(e FileEntry) error {
		if !e.ModTime.Before(before) {
			return nil
		}
		switch e.Kind {
		case FileTempKind:
			res.Removed++
			return dir.RemoveTemp(e.Name)
		case FilePartial:
			if named, err := s.isFileNamed(ctx, e.File); err != nil || named {
				return err
			}
			s.state.Lock()
			busy := s.partials[e.File]
			s.state.Unlock()
			if busy {
				return nil
			}
			res.Removed++
			return dir.RemovePartial(e.File)
		default:
			held, err := s.HasFile(ctx, e.File)
			if err != nil || held {
				return err
			}
			res.Removed++
			return dir.Remove(e.File)
		}
	})
	return res, err
}

// tidyPage is how many held files TidyFiles reads at a time.
const tidyPage = 1024

// heldPage reads up to tidyPage held files from lo on, with no iterator
// left open (the caller deletes files between pages); next is where the
// following page starts, nil at the end.
func (s *Store) heldPage(ctx context.Context, lo []byte) (page []FileInfo, next []byte, err error) {
	if err := s.stop(ctx); err != nil {
		return nil, nil, err
	}
	it, err := s.kv.NewIter(lo, []byte{keys.FileHeld + 1})
	if err != nil {
		return nil, nil, err
	}
	defer it.Close()
	for it.Next() {
		k := it.Key()
		if len(k) != 33 {
			return nil, nil, Errorf(ErrCorrupt, "damaged: file entry key")
		}
		if len(page) == tidyPage {
			return page, bytes.Clone(k), it.Err()
		}
		size, at, err := decodeFileValue(it.Value())
		if err != nil {
			return nil, nil, err
		}
		page = append(page, FileInfo{FileRef: FileRef{Hash: canonical.ID(k[1:]), Size: size}, Kept: at})
	}
	return page, nil, it.Err()
}

// isFileNamed reports whether a version held whole, in any space, names
// the file: its entries of the files index alone are read.
func (s *Store) isFileNamed(ctx context.Context, hash canonical.ID) (bool, error) {
	if s.filesUnindexed {
		named := false
		err := s.namedFilesByScan(ctx, "", func(f NamedFile) bool {
			named = f.Hash == hash
			return !named
		})
		return named, err
	}
	p := append([]byte{keys.FileNamed}, hash[:]...)
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return false, err
	}
	defer it.Close()
	named := it.Next()
	return named, it.Err()
}

// VerifyFiles reads every held file whole and checks it against its hash
// and size; it returns one line per file that fails (`minca store check`).
func (s *Store) VerifyFiles(ctx context.Context) ([]string, error) {
	var probs []string
	var all []FileInfo
	if err := s.Files(ctx, func(fi FileInfo) bool { all = append(all, fi); return true }); err != nil {
		return nil, err
	}
	buf := make([]byte, 1<<20)
	for _, fi := range all {
		if err := s.stop(ctx); err != nil {
			return probs, err
		}
		r, err := s.OpenFile(ctx, fi.Hash)
		if errors.Is(err, ErrCorrupt) {
			probs = append(probs, fmt.Sprintf("file %s: %v", fi.Hash, err))
			continue
		}
		if err != nil {
			return probs, err
		}
		h := sha256.New()
		_, err = io.CopyBuffer(h, io.NewSectionReader(r, 0, fi.Size), buf)
		r.Close()
		switch {
		case err != nil:
			probs = append(probs, fmt.Sprintf("file %s: unreadable: %v", fi.Hash, err))
		case canonical.ID(h.Sum(nil)) != fi.Hash:
			probs = append(probs, fmt.Sprintf("file %s: damaged: its %d bytes do not hash to its name", fi.Hash, fi.Size))
		}
	}
	return probs, nil
}

// moveOldFiles moves files a store kept in the KV ('F', before FileDir)
// to the FileDir, recorded in 'f', a file at a time. A store opened
// read-only keeps them where they are until it is opened to write.
func (s *Store) moveOldFiles() error {
	it, err := s.kv.NewIter([]byte{keys.File}, []byte{keys.File + 1})
	if err != nil {
		return err
	}
	var old [][]byte
	for it.Next() && len(old) < 1 {
		old = append(old, bytes.Clone(it.Key()))
	}
	err = it.Err()
	it.Close()
	if err != nil || len(old) == 0 {
		return err
	}
	if s.writable() != nil {
		return nil
	}
	it, err = s.kv.NewIter([]byte{keys.File}, []byte{keys.File + 1})
	if err != nil {
		return err
	}
	type oldFile struct{ k, v []byte }
	var files []oldFile
	for it.Next() {
		files = append(files, oldFile{bytes.Clone(it.Key()), bytes.Clone(it.Value())})
	}
	err = it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for _, f := range files {
		if len(f.k) != 33 {
			return Errorf(ErrCorrupt, "damaged: file key")
		}
		d := canonical.ID(f.k[1:])
		t, err := s.files().Create()
		if err != nil {
			return err
		}
		if _, err := t.Write(f.v); err != nil {
			t.Close()
			return err
		}
		if err := t.Keep(d); err != nil {
			return err
		}
		if err := s.files().SyncKept(); err != nil {
			return err
		}
		b, err := s.kv.NewBatch()
		if err != nil {
			return err
		}
		b.Set(keys.FileHeldKey(d), fileValue(int64(len(f.v)), s.now()))
		b.Delete(f.k)
		err = s.lacksFile(b, d, true)
		if err == nil {
			err = b.Commit(Sync)
		}
		b.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
