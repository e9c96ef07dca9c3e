package pebble_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/internal/localtest"
	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/backends/pebble/pebbletest"
	"github.com/minca-go/minca/engine"
)

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
			d := pebbletest.NewDamaged(t)
			l := d.Layout(t)
			last := l.Data[len(l.Data)-1].Handle // the engine's state key is in the first
			d.Flip(t, last.Offset, last.Length)
			kv, err := pebble.Open(d.Dir, m.opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := kv.Get(d.First); err != nil {
				t.Fatal("a key in an undamaged block:", err)
			}
			_, err = kv.Get(d.Last)
			wantCorrupt(t, "get", err, d.Dir, d.TableName())
			it, err := kv.NewIter(nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			for it.Next() {
			}
			wantCorrupt(t, "iterate", it.Err(), d.Dir, d.TableName())
			it.Close()
			err = kv.GetMany([][]byte{d.First, d.Last}, func(int, []byte) {})
			wantCorrupt(t, "get many", err, d.Dir, d.TableName())
			checkReports(t, kv, d.Dir, d.TableName())
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
	d := pebbletest.NewDamaged(t)
	l := d.Layout(t)
	if len(l.Filter) != 1 {
		t.Fatalf("%d filter blocks", len(l.Filter))
	}
	f := l.Filter[0].Handle
	d.Flip(t, f.Offset, f.Length)
	kv, err := pebble.Open(d.Dir, &pebble.Options{ReadOnly: true})
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
	checkReports(t, kv, d.Dir, d.TableName()+".sst", "checksum")
}

// A table missing or the MANIFEST cut short: the store does not open, and
// says why, naming the store and the file.
func TestDamagedFiles(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			d := pebbletest.NewDamaged(t)
			if err := os.Remove(d.Table); err != nil {
				t.Fatal(err)
			}
			before := listData(t, d.Dir)
			_, err := pebble.Open(d.Dir, m.opts)
			wantCorrupt(t, "open with a table missing", err, d.Dir, d.TableName())
			before.Same(t, listData(t, d.Dir))

			d = pebbletest.NewDamaged(t)
			manifest := d.CutManifest(t)
			before = listData(t, d.Dir)
			_, err = pebble.Open(d.Dir, m.opts)
			wantCorrupt(t, "open with the MANIFEST cut short", err, d.Dir, filepath.Base(manifest), "cut short")
			before.Same(t, listData(t, d.Dir))

			// A record damaged, good ones after it: found with or without
			// the length minca.manifest keeps.
			for _, record := range []bool{true, false} {
				d = pebbletest.NewDamaged(t)
				if !record {
					os.Remove(filepath.Join(d.Dir, pebble.ManifestRecordName))
				}
				manifest := d.FlipManifest(t)
				before = listData(t, d.Dir)
				_, err = pebble.Open(d.Dir, m.opts)
				wantCorrupt(t, "open with a MANIFEST record damaged", err, d.Dir, filepath.Base(manifest), "damaged")
				before.Same(t, listData(t, d.Dir))
			}
		})
	}
}

// listData lists the store's files but the lock files, which an open for
// writing takes: a damaged store's data is left as it was found.
func listData(t *testing.T, dir string) localtest.Listing {
	l := localtest.List(t, dir)
	delete(l, filepath.Join(dir, "LOCK"))
	delete(l, filepath.Join(dir, pebble.LockName))
	return l
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
			vs := pebbletest.Fill(t, dir, true)
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
