package folder

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// FS is the little of a filesystem the folder store uses, so tests can run
// it in memory ([NewMemFS]) and inject faults ([Faulty]). Paths are the
// OS's (filepath.Join of the root and a name's components).
type FS interface {
	ReadDir(dir string) ([]Entry, error)
	ReadFile(name string) ([]byte, error)
	Stat(name string) (Entry, error)
	// Create makes a new file, failing if it exists.
	Create(name string) (File, error)
	Rename(from, to string) error
	Remove(name string) error
	MkdirAll(dir string) error
	// SyncDir makes a directory's entries durable (after a rename).
	SyncDir(dir string) error
}

// File is a file being written.
type File interface {
	Write(p []byte) (int, error)
	Sync() error
	Close() error
}

// Entry is a directory entry or a file's metadata.
type Entry struct {
	Name    string
	Dir     bool
	Size    int64
	ModTime time.Time
	// Dataless: the file's content is not on this device (an iCloud or
	// File Provider placeholder). Known from metadata alone, so checking
	// it never forces a download (F3).
	Dataless bool
}

// OSFS is the real filesystem.
type OSFS struct{}

var _ FS = OSFS{}

func (OSFS) ReadDir(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(des))
	for _, de := range des {
		fi, err := de.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // gone since the directory was read
			}
			return nil, err
		}
		out = append(out, entryOf(fi))
	}
	return out, nil
}

func (OSFS) ReadFile(name string) ([]byte, error) { return os.ReadFile(name) }

func (OSFS) Stat(name string) (Entry, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return Entry{}, err
	}
	return entryOf(fi), nil
}

func (OSFS) Create(name string) (File, error) {
	return os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

func (OSFS) Rename(from, to string) error { return os.Rename(from, to) }
func (OSFS) Remove(name string) error     { return os.Remove(name) }
func (OSFS) MkdirAll(dir string) error    { return os.MkdirAll(dir, 0o755) }

func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.EINVAL) {
		return nil // some filesystems cannot sync a directory
	}
	return err
}

func entryOf(fi fs.FileInfo) Entry {
	return Entry{Name: fi.Name(), Dir: fi.IsDir(), Size: fi.Size(), ModTime: fi.ModTime(), Dataless: dataless(fi)}
}

// notYet reports whether a read error means "not downloaded yet": macOS
// dataless files fail with EDEADLK or EAGAIN while the provider fetches
// them (F3).
func notYet(err error) bool {
	return errors.Is(err, syscall.EDEADLK) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ETIMEDOUT)
}

// isTempName reports names that sync services and we use for files in
// flight (F2): never ours, never salvaged.
func isTempName(n string) bool {
	if n == "" || n[0] == '.' || n[0] == '~' {
		return true
	}
	for _, suf := range []string{".tmp", ".part", ".partial", ".crdownload", ".download"} {
		if len(n) > len(suf) && n[len(n)-len(suf):] == suf {
			return true
		}
	}
	return false
}

func join(root, name string) string { return filepath.Join(root, filepath.FromSlash(name)) }
