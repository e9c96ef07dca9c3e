package pebble

import (
	"io"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// readOnlyFS is the filesystem of a store opened read-only: Pebble's own,
// except that it takes no LOCK file, which it would create or open for
// writing (failing on a read-only filesystem or another user's store).
// The shared minca.lock keeps writers out instead.
type readOnlyFS struct{ vfs.FS }

func (readOnlyFS) Lock(string) (io.Closer, error) { return noLock{}, nil }

type noLock struct{}

func (noLock) Close() error { return nil }
