package pebble_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2/objstorage/objstorageprovider"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/minca-go/minca/backends/internal/localtest"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// A damaged store: the store's directory, its one table (after Fill and
// a full compaction), and the table's first and last keys.
type damaged struct {
	dir, table  string
	first, last []byte
}

func newDamaged(t *testing.T) *damaged {
	t.Helper()
	d := &damaged{dir: filepath.Join(t.TempDir(), "db")}
	fill(t, d.dir, true)
	ssts, _ := filepath.Glob(filepath.Join(d.dir, "*.sst"))
	if len(ssts) != 1 {
		t.Fatalf("%d tables after a full compaction, want 1", len(ssts))
	}
	d.table = ssts[0]
	kv, err := pebble.Open(d.dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := kv.NewIter(nil, nil)
	for it.Next() {
		if d.first == nil {
			d.first = append([]byte(nil), it.Key()...)
		}
		d.last = append(d.last[:0], it.Key()...)
	}
	if err := errors.Join(it.Err(), it.Close(), kv.Close()); err != nil {
		t.Fatal(err)
	}
	return d
}

// layout is where the blocks of the table are.
func (d *damaged) layout(t *testing.T) *sstable.Layout {
	t.Helper()
	f, err := vfs.Default.Open(d.table)
	if err != nil {
		t.Fatal(err)
	}
	r, err := objstorageprovider.NewFileReadable(f, vfs.Default, objstorageprovider.NewReadaheadConfig(), d.table)
	if err != nil {
		t.Fatal(err)
	}
	sr, err := sstable.NewReader(context.Background(), r, sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sr.Close()
	l, err := sr.Layout()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// flip flips one byte of the table, in the middle of the block at offset
// off and length n.
func (d *damaged) flip(t *testing.T, off, n uint64) {
	t.Helper()
	b, err := os.ReadFile(d.table)
	if err != nil {
		t.Fatal(err)
	}
	b[off+n/2] ^= 0x20
	if err := os.WriteFile(d.table, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (d *damaged) tableName() string { return strings.TrimSuffix(filepath.Base(d.table), ".sst") }

// wantCorrupt requires err to wrap ErrCorrupt on one line naming the
// store and each of names.
func wantCorrupt(t *testing.T, what string, err error, dir string, names ...string) {
	t.Helper()
	if !errors.Is(err, engine.ErrCorrupt) {
		t.Fatalf("%s: %v, want ErrCorrupt", what, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Fatalf("%s: the error is not one line: %q", what, msg)
	}
	for _, n := range append([]string{dir}, names...) {
		if !strings.Contains(msg, n) {
			t.Fatalf("%s: the error does not name %q: %s", what, n, msg)
		}
	}
}

var modes = []struct {
	name string
	opts *pebble.Options
}{{"write", nil}, {"read-only", &pebble.Options{ReadOnly: true}}}

// A byte flipped in a data block: the store opens (the damage is in one
// block), and reading that block — a Get of a key in it, an iteration, the
// engine's Check — reports it, naming the store and the table.
func TestDamagedDataBlock(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			d := newDamaged(t)
			l := d.layout(t)
			last := l.Data[len(l.Data)-1].Handle // the engine's state key is in the first
			d.flip(t, last.Offset, last.Length)
			kv, err := pebble.Open(d.dir, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Get(d.first); err != nil {
				t.Fatal("a key in an undamaged block:", err)
			}
			_, err = kv.Get(d.last)
			wantCorrupt(t, "get", err, d.dir, d.tableName())
			it, err := kv.NewIter(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
			}
			wantCorrupt(t, "iterate", it.Err(), d.dir, d.tableName())
			it.Close()
			err = kv.GetMany([][]byte{d.first, d.last}, func(int, []byte) {})
			wantCorrupt(t, "get many", err, d.dir, d.tableName())
			checkReports(t, kv, d.dir, d.tableName())
		})
	}
}

// checkReports requires the engine's Check of the store on kv to report
// damage naming the store and each of names; it closes kv.
func checkReports(t *testing.T, kv engine.KV, dir string, names ...string) {
	t.Helper()
	st, err := engine.Open(kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	probs, err := st.Check(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(probs) != 1 {
		t.Fatalf("check: %d problems, want 1: %q", len(probs), probs)
	}
	if !strings.Contains(probs[0], ": damaged: ") || strings.Contains(probs[0], "\n") {
		t.Fatalf("check: %q is not one line saying it is damage", probs[0])
	}
	for _, n := range append([]string{dir}, names...) {
		if !strings.Contains(probs[0], n) {
			t.Fatalf("check: %q does not name %q", probs[0], n)
		}
	}
}

// A byte flipped in a table's filter block is never read by walking every
// key, so the engine's Check finds it through VerifyFiles.
func TestDamagedFilterBlock(t *testing.T) {
	d := newDamaged(t)
	l := d.layout(t)
	if len(l.Filter) != 1 {
		t.Fatalf("%d filter blocks", len(l.Filter))
	}
	f := l.Filter[0].Handle
	d.flip(t, f.Offset, f.Length)
	kv, err := pebble.Open(d.dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := kv.NewIter(nil, nil)
	n := 0
	for it.Next() {
		n++
	}
	if err := errors.Join(it.Err(), it.Close()); err != nil || n == 0 {
		t.Fatalf("iterating %d keys: %v (a walk reads no filter block)", n, err)
	}
	checkReports(t, kv, d.dir, d.tableName()+".sst", "checksum")
}

// A table missing or the MANIFEST cut short: the store does not open, and
// says why, naming the store and the file.
func TestDamagedFiles(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			d := newDamaged(t)
			if err := os.Remove(d.table); err != nil {
				t.Fatal(err)
			}
			before := listData(t, d.dir)
			_, err := pebble.Open(d.dir, m.opts)
			wantCorrupt(t, "open with a table missing", err, d.dir, d.tableName())
			before.Same(t, listData(t, d.dir))

			d = newDamaged(t)
			manifest := cutManifest(t, d.dir)
			before = listData(t, d.dir)
			_, err = pebble.Open(d.dir, m.opts)
			wantCorrupt(t, "open with the MANIFEST cut short", err, d.dir, filepath.Base(manifest), "cut short")
			before.Same(t, listData(t, d.dir))

			// A record damaged, good ones after it: found with or without
			// the length minca.manifest keeps.
			for _, record := range []bool{true, false} {
				d = newDamaged(t)
				if !record {
					os.Remove(filepath.Join(d.dir, pebble.ManifestRecordName))
				}
				manifest := flipManifest(t, d.dir)
				before = listData(t, d.dir)
				_, err = pebble.Open(d.dir, m.opts)
				wantCorrupt(t, "open with a MANIFEST record damaged", err, d.dir, filepath.Base(manifest), "damaged")
				before.Same(t, listData(t, d.dir))
			}
		})
	}
}

// flipManifest flips a byte in the first record of the store's MANIFEST
// (the version it starts from) and returns its path.
func flipManifest(t *testing.T, dir string) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	if len(ms) != 1 {
		t.Fatalf("%d MANIFEST files", len(ms))
	}
	b, err := os.ReadFile(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	b[10] ^= 0x01 // past the first chunk's 7-byte header
	if err := os.WriteFile(ms[0], b, 0o644); err != nil {
		t.Fatal(err)
	}
	return ms[0]
}

// listData lists the store's files but the lock files, which an open for
// writing takes: a damaged store's data is left as it was found.
func listData(t *testing.T, dir string) localtest.Listing {
	l := localtest.List(t, dir)
	delete(l, filepath.Join(dir, "LOCK"))
	delete(l, filepath.Join(dir, pebble.LockName))
	return l
}

// cutManifest truncates the store's MANIFEST to half its length and
// returns its path.
func cutManifest(t *testing.T, dir string) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
	if len(ms) != 1 {
		t.Fatalf("%d MANIFEST files", len(ms))
	}
	st, err := os.Stat(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(ms[0], st.Size()/2); err != nil {
		t.Fatal(err)
	}
	return ms[0]
}

// The minca command on a damaged store: every verb that reads says what is
// damaged on one line and exits 1, store check as a problem line; never a
// stack trace.
func TestDamageOnTheCommandLine(t *testing.T) {
	bin := localtest.Minca(t)
	space := enginetest.SpaceID("localtest")
	for _, c := range []struct {
		name   string
		damage func(d *damaged) string // returns the file named
	}{
		{"flipped byte", func(d *damaged) string {
			first := d.layout(t).Data[0].Handle // the engine's state is read at every open
			d.flip(t, first.Offset, first.Length)
			return d.tableName()
		}},
		{"missing table", func(d *damaged) string {
			os.Remove(d.table)
			return d.tableName()
		}},
		{"cut MANIFEST", func(d *damaged) string { return filepath.Base(cutManifest(t, d.dir)) }},
		{"damaged MANIFEST", func(d *damaged) string { return filepath.Base(flipManifest(t, d.dir)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newDamaged(t)
			file := c.damage(d)
			localtest.DamageReported(t, bin, "pebble:"+d.dir, space, "somekey", d.dir, file)
		})
	}
}

// What a crash mid-write leaves at the end of a MANIFEST — a record cut
// short, or zeros — past what was synced, is not damage: the store opens
// and holds everything.
func TestManifestTornTail(t *testing.T) {
	for name, tail := range map[string][]byte{
		"torn record": append([]byte{1, 2, 3, 4, 100, 0, 1}, bytes.Repeat([]byte{7}, 20)...),
		"zeros":       make([]byte, 50),
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			vs := fill(t, dir, true)
			ms, _ := filepath.Glob(filepath.Join(dir, "MANIFEST-*"))
			f, err := os.OpenFile(ms[0], os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(tail)
			f.Close()
			kv, err := pebble.Open(dir, &pebble.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			localtest.ReadBack(t, kv, vs)
		})
	}
}
