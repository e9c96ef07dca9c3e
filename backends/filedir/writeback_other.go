//go:build !linux

package filedir

import "os"

// startWriteback does nothing where sync_file_range(2) is not offered:
// Keep's sync writes the file whole.
func startWriteback(f *os.File, off, n int64) {}

// dropBehind does nothing there either: the pages stay cached.
func dropBehind(f *os.File, off, n int64) {}
