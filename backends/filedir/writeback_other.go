//go:build !linux

package filedir

import (
	"errors"
	"os"
)

// startWriteback does nothing where sync_file_range(2) is not offered:
// Keep's sync writes the file whole.
func startWriteback(f *os.File, off, n int64) {}

// dropBehind does nothing there either: the pages stay cached.
func dropBehind(f *os.File, off, n int64) {}

// openDirect is refused where O_DIRECT is not offered: every byte goes
// through the cache.
func openDirect(path string) (*os.File, error) {
	return nil, errors.New("minca/filedir: no O_DIRECT here")
}

// writeDirect is never called where openDirect refuses.
func writeDirect(f *os.File, bs [][]byte, off int64) (int, error) {
	return 0, errors.New("minca/filedir: no O_DIRECT here")
}
