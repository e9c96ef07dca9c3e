package filedir

import (
	"io"
	"os"
	"syscall"

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

// openDirect opens the file at path a second time, to write past the page
// cache (O_DIRECT). tmpfs and some other file systems refuse it: the
// caller then writes through the cache.
func openDirect(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|syscall.O_DIRECT, 0)
}

// writeDirect writes bs in a row at off to f, opened by openDirect, with
// as few writes as the kernel allows (pwritev(2)); all of them or an
// error.
func writeDirect(f *os.File, bs [][]byte, off int64) (int, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	n := 0
	for len(bs) > 0 {
		var k int
		var werr error
		if cerr := rc.Control(func(fd uintptr) { k, werr = unix.Pwritev(int(fd), bs, off+int64(n)) }); cerr != nil {
			return n, cerr
		}
		if werr != nil {
			return n + max(k, 0), werr
		}
		if k == 0 {
			return n, io.ErrShortWrite
		}
		n += k
		// Past the buffers written whole, and into the one cut short.
		for k > 0 && len(bs) > 0 {
			if k >= len(bs[0]) {
				k -= len(bs[0])
				bs = bs[1:]
				continue
			}
			bs = append([][]byte{bs[0][k:]}, bs[1:]...)
			k = 0
		}
	}
	return n, nil
}
