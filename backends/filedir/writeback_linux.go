package filedir

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing n bytes of f from off
// to disk. It is advice: a failure changes nothing, since Keep syncs the
// file whole.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	})
}

// dropBehind waits for the disk writes of n bytes of f from off, started
// a span before, and drops those pages from the page cache. A file
// arriving from a peer then writes into pages the cache has just given
// back, not into fresh memory: on this project's reference VM a page the
// guest has not touched of late costs its first write several times the
// copy (1.5 s of CPU a GB against 0.3, bench/REPORT-files.md), more than
// the socket read and the hash together. It is advice too: Keep syncs the
// file whole, and a failure leaves the pages cached.
func dropBehind(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		if unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER) != nil {
			return
		}
		unix.Fadvise(int(fd), off, n, unix.FADV_DONTNEED)
	})
}
