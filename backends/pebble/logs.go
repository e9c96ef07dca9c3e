package pebble

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"

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
	if len(logs) < 2 {
		return nil
	}
	var errs []error
	for n, v := range logs {
		if v != newest {
			errs = append(errs, fs.Remove(filepath.Join(dir, n)))
		}
	}
	if d, err := fs.OpenDir(dir); err == nil {
		errs = append(errs, d.Sync(), d.Close())
	} else {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
