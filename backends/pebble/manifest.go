package pebble

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/minca-go/minca/backends/internal/localstore"
	"github.com/minca-go/minca/internal/atomicfile"
)

// ManifestRecordName is the file in the store directory where the store
// writes its MANIFEST's name and length at each open and close, to find a
// MANIFEST cut short (package doc).
const ManifestRecordName = "minca.manifest"

// checkManifest reports damage in the store's current MANIFEST before
// Pebble reads it: missing; shorter than minca.manifest says it was (when
// it names this MANIFEST); a record that does not read whole before that
// length; or a record that fails its checksum with good records after it
// (not a torn tail). Pebble would take any of these as the end of the
// MANIFEST and open an older state of the store.
func checkManifest(dir string) error {
	desc, err := pebble.Peek(dir, vfs.Default)
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	if !desc.Exists {
		return nil
	}
	name := filepath.Base(desc.ManifestFilename)
	var synced int64 // what was written and synced when minca.manifest was
	b, err := os.ReadFile(filepath.Join(dir, ManifestRecordName))
	switch {
	case err == nil:
		rec, size, ok := parseRecord(string(b))
		if !ok {
			return localstore.Corrupt("pebble", dir, fmt.Sprintf("%s does not read as a MANIFEST's name and length", ManifestRecordName))
		}
		if rec == name {
			synced = size
		}
	case !errors.Is(err, fs.ErrNotExist): // none: a store made before it, or never opened to write
		return localstore.Wrap("pebble", dir, err)
	}
	f, err := os.Open(desc.ManifestFilename)
	if errors.Is(err, fs.ErrNotExist) {
		return localstore.Corrupt("pebble", dir, name+" is missing")
	}
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	if st.Size() < synced {
		return localstore.Corrupt("pebble", dir, fmt.Sprintf("%s is cut short: %d bytes, %d when the store was last opened or closed", name, st.Size(), synced))
	}
	rr := record.NewReader(f, 0)
	for {
		at := rr.Offset()
		r, err := rr.Next()
		if err == io.EOF {
			return nil
		}
		if err == nil {
			_, err = io.Copy(io.Discard, r)
		}
		if err == nil {
			continue
		}
		if !record.IsInvalidRecord(err) {
			return localstore.Wrap("pebble", dir, fmt.Errorf("%s: %w", name, err))
		}
		torn, terr := tornTail(f, at, st.Size())
		switch {
		case terr != nil:
			return localstore.Wrap("pebble", dir, fmt.Errorf("%s: %w", name, terr))
		case !torn:
			return localstore.Corrupt("pebble", dir, fmt.Sprintf("%s: the record at offset %d is damaged (%v), and records follow it", name, at, err))
		case at < synced:
			return localstore.Corrupt("pebble", dir, fmt.Sprintf("%s is cut short: it ends in a bad record at offset %d, before the %d bytes it had when the store was last opened or closed", name, at, synced))
		}
		return nil // the torn last record a crash leaves: not yet synced, nothing lost
	}
}

// The MANIFEST's record format (pebble/record, the LevelDB log format):
// 32 KiB blocks of chunks, each a 7-byte header — checksum (4), length (2,
// little-endian), type — then its data; a block's last bytes, too few for
// a header, are padding.
const (
	blockSize   = 32 << 10
	chunkHeader = 7
	fullChunk   = 1
	firstChunk  = 2
	middleChunk = 3
	lastChunk   = 4
)

// tornTail reports whether the MANIFEST's bytes from the record at offset
// at to its end (size) are that record alone, cut short or whole, or
// zeros: what a crash mid-write leaves. Anything else after it means the
// record is damaged in a file that went on.
func tornTail(f *os.File, at, size int64) (bool, error) {
	var hdr [chunkHeader]byte
	for pos := at; ; {
		if rem := blockSize - pos%blockSize; rem < chunkHeader {
			pos += rem
		}
		if pos+chunkHeader > size {
			return true, nil
		}
		if _, err := f.ReadAt(hdr[:], pos); err != nil {
			return false, err
		}
		end := pos + chunkHeader + int64(binary.LittleEndian.Uint16(hdr[4:6]))
		if end > size {
			return true, nil
		}
		switch hdr[6] {
		case fullChunk, lastChunk:
			return end == size, nil
		case firstChunk, middleChunk:
			pos = end
		default:
			return zeros(f, pos, size)
		}
	}
}

// zeros reports whether the file is all zeros from off to size (a tail
// some filesystems leave after a crash).
func zeros(f *os.File, off, size int64) (bool, error) {
	buf := make([]byte, 4096)
	for off < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		for _, c := range buf[:n] {
			if c != 0 {
				return false, nil
			}
		}
		if err != nil && err != io.EOF {
			return false, err
		}
		off += int64(n)
		if n == 0 {
			break
		}
	}
	return true, nil
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
	if err := atomicfile.WriteFile(filepath.Join(dir, ManifestRecordName), []byte(rec), 0o644); err != nil {
		return localstore.Wrap("pebble", dir, err)
	}
	return nil
}
