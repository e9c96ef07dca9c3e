package pebble

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/minca-go/minca/backends/internal/localstore"
)

// VerifyFiles reads every block of every table of the store and checks its
// checksum, the blocks that reading every key never touches (filters,
// properties) included. It returns one line per damaged table, naming it
// and what failed; the error is for a check that could not be made.
func (s *Store) VerifyFiles(ctx context.Context) (problems []string, err error) {
	if err := s.fatal.get(); err != nil {
		return nil, err
	}
	defer s.guard(&err)
	levels, err := s.db.SSTables()
	if err != nil {
		return nil, s.wrap(err)
	}
	for _, level := range levels {
		for _, t := range level {
			if err := ctx.Err(); err != nil {
				return problems, err
			}
			name := fmt.Sprintf("%s.sst", t.BackingSSTNum)
			err := verifyTable(ctx, s.dir, name)
			if errors.Is(err, fs.ErrNotExist) {
				// A compaction that ran since the listing may have
				// deleted the table; only a table the store still
				// names is missing.
				still, lerr := s.holdsTable(name)
				if lerr != nil {
					return problems, lerr
				}
				if !still {
					continue
				}
			}
			if err != nil {
				// The reader opened outside the store knows no file
				// number, and says "file 000000": the name says which.
				msg := strings.Replace(err.Error(), "file 000000: ", "", 1)
				problems = append(problems, localstore.Corrupt("pebble", s.dir, name+": "+msg).Error())
			}
		}
	}
	return problems, nil
}

// holdsTable reports whether the store's current tables include the named
// one.
func (s *Store) holdsTable(name string) (bool, error) {
	levels, err := s.db.SSTables()
	if err != nil {
		return false, s.wrap(err)
	}
	for _, level := range levels {
		for _, t := range level {
			if fmt.Sprintf("%s.sst", t.BackingSSTNum) == name {
				return true, nil
			}
		}
	}
	return false, nil
}

// verifyTable checks one table's blocks; the store's tables use Pebble's
// default comparer and key schema, the reader's defaults.
func verifyTable(ctx context.Context, dir, name string) (err error) {
	fsys := vfs.Default
	f, err := fsys.Open(fsys.PathJoin(dir, name))
	if err != nil {
		return err
	}
	readable, err := objstorageprovider.NewFileReadable(f, fsys, objstorageprovider.NewReadaheadConfig(), name)
	if err != nil {
		f.Close()
		return err
	}
	r, err := sstable.NewReader(ctx, readable, sstable.ReaderOptions{})
	if err != nil {
		readable.Close()
		return err
	}
	defer r.Close()
	return r.ValidateBlockChecksums()
}
