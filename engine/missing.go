package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// The files index: which files the versions held whole name ('n'), and
// of those which are not held ('N'), so that the files a node is to fetch
// (docs/sync.md §7.7) are listed without reading every version. 'n' is
// kept in the batch that stores a version whole, demotes it to a stub or
// gives a stub its body; 'N' in those batches and in the one that records
// a file held or lets it go.

// fileNameValue is an 'n' or 'N' value: size ‖ space.
func fileNameValue(size int64, space string) []byte {
	return append(binary.AppendUvarint(nil, uint64(size)), space...)
}

func decodeFileName(b []byte) (size int64, space string, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > MaxFileSize {
		return 0, "", Errorf(ErrCorrupt, "damaged: files index entry")
	}
	return int64(n), string(b[k:]), nil
}

// nameFiles notes, in the batch, that version d of space, held whole,
// names files.
func (t *tx) nameFiles(d canonical.ID, space string, files []FileRef) error {
	if len(files) == 0 {
		return nil
	}
	tag := keys.SpaceTag(space)
	for _, f := range files {
		fd := f.Hash
		val := fileNameValue(f.Size, space)
		t.set(keys.FileNamedKey(fd, tag, d), val)
		lk := keys.FileLacksKey(tag, fd)
		if _, ok, err := t.get(lk); err != nil {
			return err
		} else if ok {
			continue
		}
		if _, held, err := t.get(keys.FileHeldKey(fd)); err != nil {
			return err
		} else if !held {
			t.set(lk, val)
			t.lacks = true
		}
	}
	return nil
}

// unnameFiles notes, in the batch, that version d of space no longer
// names files held whole (its body went): a file no other version of the
// space names is no longer lacking there.
func (t *tx) unnameFiles(d canonical.ID, space string, files []FileRef) error {
	tag := keys.SpaceTag(space)
	for _, f := range files {
		fd := f.Hash
		t.del(keys.FileNamedKey(fd, tag, d))
		p := append(append([]byte{keys.FileNamed}, fd[:]...), tag[:]...)
		named := false
		if err := t.scan(p, keys.PrefixEnd(p), func(k, v []byte) bool { named = true; return false }); err != nil {
			return err
		}
		if !named {
			t.del(keys.FileLacksKey(tag, fd))
		}
	}
	return nil
}

// unnameStored is unnameFiles for a version known by its stored envelope.
func (t *tx) unnameStored(d canonical.ID, env []byte) error {
	if !bytes.Contains(env, filesMember) {
		return nil
	}
	v, err := storedStub(env)
	if err != nil {
		return err
	}
	return t.unnameFiles(d, v.Space, v.Files)
}

// storedStub reads a stored envelope's version, as its stub: where its
// space, id and files are read from the store's own bytes.
func storedStub(env []byte) (*record.Version, error) {
	stub, _, err := stubBytes(env)
	if err != nil {
		return nil, err
	}
	val, err := canonical.Parse(stub)
	if err != nil {
		return nil, Errorf(ErrCorrupt, "damaged: stored version envelope: %v", err)
	}
	// Quoted: a retained version's stub is no refusal here (02 §4.6 #10
	// is about versions travelling).
	v, err := record.QuotedFromValue(val)
	if err != nil {
		return nil, Errorf(ErrCorrupt, "damaged: stored version envelope: %v", err)
	}
	return v, nil
}

// lacksFile changes, in b, which spaces lack file d: none once it is held
// (held true), else every space a version held whole names it in.
func (s *Store) lacksFile(b Batch, d canonical.ID, held bool) error {
	p := append([]byte{keys.FileNamed}, d[:]...)
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return err
	}
	var last []byte
	for it.Next() {
		k := it.Key()
		if len(k) != 1+32+keys.SpaceLen+32 {
			it.Close()
			return Errorf(ErrCorrupt, "damaged: files index key")
		}
		tagB := k[33 : 33+keys.SpaceLen]
		if bytes.Equal(tagB, last) {
			continue
		}
		last = bytes.Clone(tagB)
		tag := [keys.SpaceLen]byte(tagB)
		if held {
			err = b.Delete(keys.FileLacksKey(tag, d))
		} else {
			err = b.Set(keys.FileLacksKey(tag, d), bytes.Clone(it.Value()))
		}
		if err != nil {
			it.Close()
			return err
		}
	}
	return errors.Join(it.Err(), it.Close())
}

// missingPage is how many 'N' entries MissingFiles reads under one
// iterator: the caller's yield runs with none open.
const missingPage = 256

// MissingFiles calls yield for each file a version held whole in space
// names that the store does not hold, once each (a version naming it),
// or in every space when space is ""; empty files are left out: every
// store makes those. It reads the files index, not the versions.
func (s *Store) MissingFiles(ctx context.Context, space string, yield func(NamedFile) bool) error {
	return s.MissingFilesExcept(ctx, space, nil, yield)
}

// MissingFilesExcept is MissingFiles leaving out, before looking for a
// version naming each, the files skip reports (nil: none): a caller
// fetching many files passes over those it has in hand at no cost.
func (s *Store) MissingFilesExcept(ctx context.Context, space string, skip func(canonical.ID) bool, yield func(NamedFile) bool) error {
	return s.MissingFilesAfter(ctx, space, canonical.ID{}, skip, yield)
}

// MissingFilesAfter is MissingFilesExcept going on past file after, in
// the order of the files' digests (the zero ID: from the first): a caller
// looking again and again for a few missing files of many starts where
// its last look stopped, not at files it has in hand. after applies to
// one space; with space "", or in a store whose files index is still
// being built, the look starts at the first.
func (s *Store) MissingFilesAfter(ctx context.Context, space string, after canonical.ID, skip func(canonical.ID) bool, yield func(NamedFile) bool) error {
	if err := s.enter(); err != nil {
		return err
	}
	defer s.leave()
	if s.filesUnindexed {
		return s.missingByScan(ctx, space, func(f NamedFile) bool {
			if skip != nil && skip(f.Hash) {
				return true
			}
			return yield(f)
		})
	}
	lo := []byte{keys.FileLacks}
	if space != "" {
		tag := keys.SpaceTag(space)
		lo = append(lo, tag[:]...)
	}
	hi := keys.PrefixEnd(lo)
	if space != "" && after != (canonical.ID{}) {
		lo = append(keys.FileLacksKey(keys.SpaceTag(space), after), 0)
	}
	seen := map[canonical.ID]bool{} // space "": a file lacking in two spaces comes once
	for {
		page, err := s.lacking(lo, hi, skip)
		if err != nil || len(page) == 0 {
			return err
		}
		lo = append(page[len(page)-1].key, 0)
		for _, e := range page {
			if err := s.stop(ctx); err != nil {
				return err
			}
			if e.skipped || seen[e.Hash] {
				continue
			}
			if space == "" {
				seen[e.Hash] = true
			}
			if e.Size == 0 {
				if err := s.PutFile(ctx, e.Hash, nil); err != nil && !errors.Is(err, ErrFileMismatch) {
					return err
				}
				continue
			}
			// The version is looked for only now: a caller taking a few
			// files of many costs a look for each of those few.
			if found, err := s.naming(&e); err != nil {
				return err
			} else if !found {
				continue
			}
			if !yield(e.NamedFile) {
				return nil
			}
		}
	}
}

type lackingFile struct {
	NamedFile
	key     []byte
	skipped bool // skip reported it: no version looked for
}

// lacking reads up to missingPage 'N' entries in [lo, hi), marking those
// skip reports.
func (s *Store) lacking(lo, hi []byte, skip func(canonical.ID) bool) ([]lackingFile, error) {
	it, err := s.kv.NewIter(lo, hi)
	if err != nil {
		return nil, err
	}
	var out []lackingFile
	for len(out) < missingPage && it.Next() {
		k := it.Key()
		if len(k) != 1+keys.SpaceLen+32 {
			it.Close()
			return nil, Errorf(ErrCorrupt, "damaged: files index key")
		}
		size, space, err := decodeFileName(it.Value())
		if err != nil {
			it.Close()
			return nil, err
		}
		fd, _ := keys.Digest(k, 1+keys.SpaceLen)
		out = append(out, lackingFile{NamedFile: NamedFile{FileRef: FileRef{Hash: fd, Size: size}, Space: space},
			key: bytes.Clone(k)})
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].skipped = skip != nil && skip(out[i].Hash)
	}
	return out, nil
}

// naming finds a version naming a lacking file, as the files index says;
// false when the file is no longer lacking there (held, or no version
// held whole names it now: the index moved since its page was read).
func (s *Store) naming(e *lackingFile) (bool, error) {
	tag := keys.SpaceTag(e.Space)
	p := append(append([]byte{keys.FileNamed}, e.Hash[:]...), tag[:]...)
	it, err := s.kv.NewIter(p, keys.PrefixEnd(p))
	if err != nil {
		return false, err
	}
	found := it.Next()
	if found {
		e.Version, _ = keys.Digest(it.Key(), len(p))
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil || found {
		return found, err
	}
	if _, err := s.kv.Get(e.key); errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return false, Errorf(ErrCorrupt, "damaged: files index: file %s lacking in space %s, named by no version", e.Hash, e.Space)
}

// missingByScan is MissingFiles by reading every version held whole: for
// a store of an earlier layout open read-only, which has no files index.
func (s *Store) missingByScan(ctx context.Context, space string, yield func(NamedFile) bool) error {
	seen := map[canonical.ID]bool{}
	var ferr error
	err := s.namedFilesByScan(ctx, space, func(f NamedFile) bool {
		if seen[f.Hash] {
			return true
		}
		seen[f.Hash] = true
		held, err := s.HasFile(ctx, f.Hash)
		if err != nil {
			ferr = err
			return false
		}
		if held || f.Size == 0 {
			return true // a store open read-only makes no empty file
		}
		return yield(f)
	})
	if ferr != nil {
		return ferr
	}
	return err
}

// indexFiles builds the files index of a store of an earlier layout, in
// b: every version held whole naming files, and which of those files are
// not held.
func (s *Store) indexFiles(ctx context.Context, b Batch) error {
	held := map[canonical.ID]bool{}
	lacks := map[string][]byte{}
	var ferr error
	err := s.namedFilesByScan(ctx, "", func(f NamedFile) bool {
		fd, vd := f.Hash, f.Version
		tag := keys.SpaceTag(f.Space)
		val := fileNameValue(f.Size, f.Space)
		if ferr = b.Set(keys.FileNamedKey(fd, tag, vd), val); ferr != nil {
			return false
		}
		h, ok := held[fd]
		if !ok {
			if h, ferr = s.HasFile(ctx, fd); ferr != nil {
				return false
			}
			held[fd] = h
		}
		if lk := string(keys.FileLacksKey(tag, fd)); !h && lacks[lk] == nil {
			lacks[lk] = val
		}
		return true
	})
	if err = errors.Join(err, ferr); err != nil {
		return err
	}
	for k, v := range lacks {
		if err := b.Set([]byte(k), v); err != nil {
			return err
		}
	}
	return nil
}
