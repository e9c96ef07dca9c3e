package filedir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/minca-go/minca/canonical"
)

// A file being written has its disk writes started every writebackEvery
// bytes, in order and each byte once, from where a partial file stood
// when it was opened; the bytes are the file's whatever is started.
func TestWritebackStartsAsTheFileGrows(t *testing.T) {
	d := Open(t.TempDir())
	type span struct{ off, n int64 }
	var got []span
	record := func(f *os.File, off, n int64) {
		got = append(got, span{off, n})
		startWriteback(f, off, n)
	}
	data := make([]byte, 2*writebackEvery+writebackEvery/2+3)
	for i := range data {
		data[i] = byte(i * 13)
	}
	name := canonical.IDOf(data)
	ft, err := d.Partial(name)
	if err != nil {
		t.Fatal(err)
	}
	tp := ft.(*temp)
	tp.writeback = record
	// A first part in odd pieces, closed, then opened again.
	first := writebackEvery + writebackEvery/3
	for off := 0; off < first; off += 300_001 {
		if _, err := tp.Write(data[off:min(first, off+300_001)]); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 1 || got[0].off != 0 || got[0].n < writebackEvery || got[0].n >= writebackEvery+300_001 {
		t.Fatalf("after %d bytes in pieces of 300,001, writes started %v; want one span from 0 of %d bytes and less than a piece more", first, got, writebackEvery)
	}
	flushed := got[0].n
	if err := tp.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := tp.Close(); err != nil {
		t.Fatal(err)
	}
	ft, err = d.Partial(name)
	if err != nil {
		t.Fatal(err)
	}
	tp = ft.(*temp)
	tp.writeback = record
	got = nil
	for off := first; off < len(data); off += 1 << 20 {
		if _, err := tp.Write(data[off:min(len(data), off+1<<20)]); err != nil {
			t.Fatal(err)
		}
	}
	// Opened again, it starts from what the partial held (synced), not
	// from where the last span stopped.
	at := int64(first)
	for _, s := range got {
		if s.off != at || s.n < writebackEvery {
			t.Fatalf("spans after reopening %v: each starts where the last stopped (from %d, the partial's size; the first run's stopped at %d) and is at least %d bytes", got, first, flushed, writebackEvery)
		}
		at += s.n
	}
	if len(got) != 1 || int64(len(data))-at >= writebackEvery {
		t.Fatalf("spans after reopening %v: %d bytes left unstarted; at most %d may be", got, int64(len(data))-at, writebackEvery-1)
	}
	if err := tp.Keep(name); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Root(), name.String())); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the file kept is not the bytes written (%v)", err)
	}
}

// A partial file's pages are dropped a span behind the writes started:
// each dropped span is one started before, in order, each byte once, and
// never the span just started; a temporary file (an upload) drops none.
func TestPartialDropsBehindTheWriteback(t *testing.T) {
	d := Open(t.TempDir())
	type span struct{ off, n int64 }
	var started, dropped []span
	data := make([]byte, 5*writebackEvery+writebackEvery/2)
	for i := range data {
		data[i] = byte(i * 7)
	}
	name := canonical.IDOf(data)
	ft, err := d.Partial(name)
	if err != nil {
		t.Fatal(err)
	}
	tp := ft.(*temp)
	// Through the page cache, as where O_DIRECT is refused: whole
	// blocks from an aligned buffer would go past it, leaving nothing to
	// drop (TestDirectWritesLeaveNothingToDrop).
	tp.noDirect = true
	tp.writeback = func(f *os.File, off, n int64) {
		started = append(started, span{off, n})
		startWriteback(f, off, n)
	}
	tp.drop = func(f *os.File, off, n int64) {
		if len(started) == 0 || off+n > started[len(started)-1].off {
			t.Errorf("dropped %d bytes from %d while the writes started were %v: only spans before the last may be dropped", n, off, started)
		}
		dropped = append(dropped, span{off, n})
		dropBehind(f, off, n)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := tp.Write(data[off:min(len(data), off+1<<20)]); err != nil {
			t.Fatal(err)
		}
	}
	if len(dropped) != len(started)-1 {
		t.Fatalf("writes started %v, pages dropped %v: every span but the last is dropped", started, dropped)
	}
	for i, s := range dropped {
		if s != started[i] {
			t.Fatalf("span %d dropped is %v; the one started was %v", i, s, started[i])
		}
	}
	if err := tp.Keep(name); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Root(), name.String())); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the file kept is not the bytes written (%v)", err)
	}

	ft, err = d.Create()
	if err != nil {
		t.Fatal(err)
	}
	up := ft.(*temp)
	if up.drop != nil {
		t.Fatal("a temporary file (an upload) drops its pages: only a partial file does")
	}
	up.Close()
}

// A partial file's whole blocks from a buffer on a block's boundary go
// past the page cache, and the rest through it, each where it belongs: a
// chunk at an odd address, a tail of less than a block. Spans written
// only past the cache start no writes and drop nothing; a span with
// cached bytes has its writes started.
func TestDirectWritesLeaveNothingToDrop(t *testing.T) {
	d := Open(t.TempDir())
	type span struct{ off, n int64 }
	var started, dropped []span
	// One allocation, cut to start on a block's boundary.
	buf := make([]byte, 3*writebackEvery+2*directBlock)
	skip := (directBlock - int(uintptr(unsafe.Pointer(&buf[0]))%directBlock)) % directBlock
	data := buf[skip : skip+3*writebackEvery+77]
	for i := range data {
		data[i] = byte(i*29 + i>>12)
	}
	name := canonical.IDOf(data)
	ft, err := d.Partial(name)
	if err != nil {
		t.Fatal(err)
	}
	tp := ft.(*temp)
	tp.writeback = func(f *os.File, off, n int64) { started = append(started, span{off, n}) }
	tp.drop = func(f *os.File, off, n int64) { dropped = append(dropped, span{off, n}) }
	write := func(b []byte) {
		t.Helper()
		if n, err := tp.Write(b); err != nil || n != len(b) {
			t.Fatalf("writing %d bytes at %d: %d, %v", len(b), tp.size, n, err)
		}
	}
	const chunk = 1 << 20
	// Two spans in aligned chunks: the first in runs of two with one
	// write (WriteV), the second a chunk at a time.
	for off := 0; off < writebackEvery; off += 2 * chunk {
		if n, err := tp.WriteV([][]byte{data[off : off+chunk], data[off+chunk : off+2*chunk]}); err != nil || n != 2*chunk {
			t.Fatalf("writing a run of 2 chunks at %d: %d, %v", off, n, err)
		}
	}
	for off := writebackEvery; off < 2*writebackEvery; off += chunk {
		write(data[off : off+chunk])
	}
	if tp.noDirect {
		t.Skip("the file system refuses O_DIRECT: every byte goes through the cache (TestPartialDropsBehindTheWriteback)")
	}
	if tp.direct == nil || tp.cached || len(started) != 0 || len(dropped) != 0 {
		t.Fatalf("after 2 spans of aligned chunks: direct %v, cached %v, writes started %v, dropped %v; want direct, nothing cached, started or dropped", tp.direct != nil, tp.cached, started, dropped)
	}
	// The third span's first chunk at an odd address (its bytes copied
	// there), then aligned chunks again, then a tail of 77 bytes.
	odd := make([]byte, chunk+1)[1:]
	copy(odd, data[2*writebackEvery:])
	write(odd)
	if !tp.cached {
		t.Fatal("a chunk at an odd address went past the cache")
	}
	// A run with a piece of whole blocks under directFrom inside it (a
	// FILE-DATA cut short by the credit): each byte where it belongs.
	at := 2*writebackEvery + chunk
	if n, err := tp.WriteV([][]byte{data[at : at+chunk], data[at+chunk : at+chunk+8*directBlock], data[at+chunk+8*directBlock : at+2*chunk]}); err != nil || n != 2*chunk {
		t.Fatalf("writing a run with a short piece at %d: %d, %v", at, n, err)
	}
	for off := at + 2*chunk; off < 3*writebackEvery; off += chunk {
		write(data[off : off+chunk])
	}
	write(data[3*writebackEvery:])
	if want := []span{{2 * writebackEvery, writebackEvery}}; len(started) != 1 || started[0] != want[0] || len(dropped) != 0 {
		t.Fatalf("writes started %v, dropped %v; want started %v (the one span with cached bytes), none dropped", started, dropped, want)
	}
	if err := tp.Keep(name); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(d.Root(), name.String())); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("the file kept is not the bytes written (%v)", err)
	}
}
