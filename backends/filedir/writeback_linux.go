package filedir

import (
	"os"
	"syscall"
)

// syncFileRangeWrite starts writing a range's dirty pages, without
// waiting for them (sync_file_range(2)).
const syncFileRangeWrite = 0x2

// startWriteback asks the kernel to start writing n bytes of f from off
// to disk. It is advice: a failure changes nothing, since Keep syncs the
// file whole.
func startWriteback(f *os.File, off, n int64) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.SyncFileRange(int(fd), off, n, syncFileRangeWrite)
	})
}
