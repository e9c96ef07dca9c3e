package filedir

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

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
