package pebble

import (
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2/record"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// removeSpentLogs deletes the write-ahead logs older than the newest from
// a store that was flushed and closed. Pebble keeps up to memTables+1
// spent logs (12–16 MiB each) to write the next ones over, and deletes
// them only when a later open finds them; at rest they are a fixed 40–50
// MiB of a store that holds no data in them: the flush at close put
// every memtable into a table, and the manifest names the newest log
// (the one the flush started) as the oldest still needed. A crash
// part-way leaves spent logs, which the next open deletes as before.
// The newest log is emptied when it holds no record (emptyLog).
func removeSpentLogs(fs vfs.FS, dir string) error {
	if fs == nil {
		fs = vfs.Default
	}
	names, err := fs.List(dir)
	if err != nil {
		return err
	}
	logs := map[string]uint64{}
	var newest uint64
	for _, n := range names {
		num, ok := strings.CutSuffix(n, ".log")
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(num, 10, 64); err == nil {
			logs[n] = v
			newest = max(newest, v)
		}
	}
	var errs []error
	for n, v := range logs {
		if v != newest {
			errs = append(errs, fs.Remove(filepath.Join(dir, n)))
		} else {
			errs = append(errs, emptyLog(fs, filepath.Join(dir, n), v))
		}
	}
	if d, err := fs.OpenDir(dir); err == nil {
		errs = append(errs, d.Sync(), d.Close())
	} else {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// emptyLog cuts the log at path (number num) to nothing when it holds no
// record of its own, as the newest log does after the flush at close:
// Pebble took its file for reuse from a spent log, whose records (6–16
// MiB, a memtable's worth) a replay skips by their log number, so they
// are bytes a store at rest keeps for nothing. A log that holds a record
// is kept as it is. Cut short by a crash, the file holds those spent
// records or nothing: either replays as no record.
func emptyLog(fs vfs.FS, path string, num uint64) error {
	f, err := fs.Open(path)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return errors.Join(err, f.Close())
	}
	_, err = readerOf(record.NewReader, f, num).Next()
	f.Close()
	switch {
	case err == nil:
		return nil // a record: the log is needed
	case err != io.EOF && !record.IsInvalidRecord(err):
		return err
	}
	w, err := fs.Create(path, vfs.WriteCategoryUnspecified)
	if err != nil {
		return err
	}
	return errors.Join(w.Sync(), w.Close())
}

// readerOf calls newReader (record.NewReader, whose log number is of a
// type Pebble keeps internal) with the log number num.
func readerOf[N ~uint64](newReader func(io.Reader, N) *record.Reader, r io.Reader, num uint64) *record.Reader {
	return newReader(r, N(num))
}
