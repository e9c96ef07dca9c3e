package filedir

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/minca-go/minca/canonical"
	"golang.org/x/sys/unix"
)

// On Linux a large partial file holds at most a few spans of the page
// cache as it grows: the pages a span behind the writeback are dropped
// (the cache's own residency, read with mincore(2)).
func TestPartialLeavesThePageCache(t *testing.T) {
	dir := t.TempDir()
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.Type == unix.TMPFS_MAGIC {
		t.Skip("the temporary directory is on tmpfs, whose pages are the file itself: nothing to drop")
	}
	d := Open(dir)
	const size = 8 * writebackEvery
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 31)
	}
	name := canonical.IDOf(data)
	ft, err := d.Partial(name)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < size; off += 1 << 20 {
		if _, err := ft.Write(data[off : off+1<<20]); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(filepath.Join(d.partialDir(), name.String()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(m)
	vec := make([]byte, size/os.Getpagesize())
	if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatal(e)
	}
	resident := 0
	for _, v := range vec {
		resident += int(v & 1)
	}
	// The last span started and the one being written stay; the six
	// before them are dropped.
	if most := 2 * writebackEvery / os.Getpagesize(); resident > most {
		t.Fatalf("%d of the %d pages of a %d MiB partial file are cached; at most %d (two spans) may be", resident, len(vec), size>>20, most)
	}
	if err := ft.Keep(name); err != nil {
		t.Fatal(err)
	}
}
