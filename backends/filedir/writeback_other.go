//go:build !linux

package filedir

import "os"

// startWriteback does nothing where sync_file_range(2) is not offered:
// Keep's sync writes the file whole.
func startWriteback(f *os.File, off, n int64) {}
