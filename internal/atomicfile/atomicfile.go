// Package atomicfile writes a file whole or not at all, durably: what a
// node or a home keeps in a small file (a note, its connections) is never
// seen half written, and is on disk once the write returns; a key file is
// never overwritten.
package atomicfile

import (
	"os"
	"path/filepath"
)

// WriteFile replaces path with data: a temporary file beside it with perm,
// written and fsynced, renamed over path, then the directory fsynced.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, os.Rename)
}

// Create writes data to a new file at path as WriteFile does, but never
// replaces one: the temporary file is linked to path, not renamed, so when
// path exists Create fails with an error that is fs.ErrExist and leaves
// what is there untouched (a key file is never overwritten).
func Create(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, os.Link)
}

// write writes data to a temporary file beside path, fsynced, then puts it
// at path with place and fsyncs the directory.
func write(path string, data []byte, perm os.FileMode, place func(tmp, path string) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := place(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
