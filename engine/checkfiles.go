package engine

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/internal/keys"
)

// filesIndex checks the files index against the versions held whole
// (docs/stores.md, Files): every file a version names is in 'n' under it,
// and either held or listed missing ('N') in its space; 'n' lists nothing
// no version names, and 'N' no file that is held or that no version of
// the space names. A store of an earlier layout open read-only has no
// index to check.
func (c *checker) filesIndex(ctx context.Context) error {
	if c.s.filesUnindexed {
		return nil
	}
	type fileInSpace struct {
		tag  [keys.SpaceLen]byte
		file canonical.ID
	}
	named := map[string]NamedFile{}      // the 'n' entries the versions call for, by key
	lacks := map[fileInSpace]NamedFile{} // the 'N' entries they call for
	held := map[canonical.ID]bool{}
	var ferr error
	err := c.s.namedFilesByScan(ctx, "", func(f NamedFile) bool {
		fd, vd := f.Hash, f.Version
		tag := keys.SpaceTag(f.Space)
		named[string(keys.FileNamedKey(fd, tag, vd))] = f
		h, ok := held[fd]
		if !ok {
			if h, ferr = c.has(keys.FileHeldKey(fd)); ferr != nil {
				return false
			}
			held[fd] = h
		}
		if fs := (fileInSpace{tag, fd}); !h {
			if _, ok := lacks[fs]; !ok {
				lacks[fs] = f
			}
		}
		return true
	})
	if err != nil || ferr != nil {
		return errors.Join(err, ferr)
	}
	err = c.scan(ctx, keys.FileNamed, func(k, v []byte) error {
		fd, _ := keys.Digest(k, 1)
		vd, _ := keys.Digest(k, 1+32+keys.SpaceLen)
		size, space, err := decodeFileName(v)
		switch f, ok := named[string(k)]; {
		case len(k) != 1+32+keys.SpaceLen+32:
			c.add("files index: damaged key %x", k)
		case err != nil:
			c.add("files index: file %s named by version %s: %v", fd, vd, err)
		case !ok:
			c.add("files index: lists file %s as named by version %s in space %s, which does not name it held whole", fd, vd, space)
		case f.Size != size || f.Space != space:
			c.add("files index: file %s named by version %s says size %d in space %s; the version says size %d in space %s", fd, vd, size, space, f.Size, f.Space)
		}
		delete(named, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(named)) {
		f := named[k]
		c.add("files index: version %s names file %s in space %s, and the index does not list it", f.Version, f.Hash, f.Space)
	}
	err = c.scan(ctx, keys.FileLacks, func(k, v []byte) error {
		if len(k) != 1+keys.SpaceLen+32 {
			c.add("files index: damaged missing-file key %x", k)
			return nil
		}
		fd, _ := keys.Digest(k, 1+keys.SpaceLen)
		fs := fileInSpace{[keys.SpaceLen]byte(k[1 : 1+keys.SpaceLen]), fd}
		_, space, err := decodeFileName(v)
		switch _, ok := lacks[fs]; {
		case err != nil:
			c.add("files index: file %s listed missing: %v", fd, err)
		case ok:
		case held[fd]:
			c.add("files index: lists file %s missing in space %s, and it is held", fd, space)
		default:
			c.add("files index: lists file %s missing in space %s, which no version held whole there names", fd, space)
		}
		delete(lacks, fs)
		return nil
	})
	if err != nil {
		return err
	}
	rest := slices.SortedFunc(maps.Values(lacks), func(a, b NamedFile) int {
		return cmp.Or(cmp.Compare(a.Space, b.Space), a.Hash.Compare(b.Hash))
	})
	for _, f := range rest {
		c.add("files index: file %s, named by version %s in space %s and not held, is not listed missing", f.Hash, f.Version, f.Space)
	}
	return nil
}
