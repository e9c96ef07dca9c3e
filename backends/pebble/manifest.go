package pebble

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/minca-go/minca/backends/internal/localstore"
)

// ManifestRecordName is the file in the store directory where the store
// writes its MANIFEST's name and length at each open and close, to find a
// MANIFEST cut short (package doc).
const ManifestRecordName = "minca.manifest"

// checkManifest reports damage when the MANIFEST that minca.manifest names
// is now shorter than written there, or gone while still Pebble's current
// one. Without a record (a store made before it, or read-only where none
// was written) there is nothing to compare.
func checkManifest(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, ManifestRecordName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	name, size, ok := parseRecord(string(b))
	if !ok {
		return localstore.Corrupt("pebble", dir, fmt.Sprintf("%s does not read as a MANIFEST's name and length", ManifestRecordName))
	}
	desc, err := pebble.Peek(dir, vfs.Default)
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	if !desc.Exists || filepath.Base(desc.ManifestFilename) != name {
		return nil // Pebble has moved on to another MANIFEST since
	}
	st, err := os.Stat(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return localstore.Corrupt("pebble", dir, name+" is missing")
	}
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	if st.Size() < size {
		return localstore.Corrupt("pebble", dir, fmt.Sprintf("%s is cut short: %d bytes, %d when the store was last opened or closed", name, st.Size(), size))
	}
	return nil
}

func parseRecord(s string) (name string, size int64, ok bool) {
	name, n, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok || !strings.HasPrefix(name, "MANIFEST-") || strings.ContainsAny(name, `/\`) {
		return "", 0, false
	}
	size, err := strconv.ParseInt(n, 10, 64)
	return name, size, err == nil && size >= 0
}

// recordManifest writes the current MANIFEST's name and length to
// minca.manifest, atomically (temp file, sync, rename, sync directory).
func recordManifest(dir string) error {
	desc, err := pebble.Peek(dir, vfs.Default)
	if err == nil && !desc.Exists {
		err = errors.New("no current MANIFEST")
	}
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	st, err := os.Stat(desc.ManifestFilename)
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	rec := fmt.Sprintf("%s %d\n", filepath.Base(desc.ManifestFilename), st.Size())
	if err := writeAtomic(filepath.Join(dir, ManifestRecordName), []byte(rec)); err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	return nil
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err = errors.Join(err, f.Sync(), f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
