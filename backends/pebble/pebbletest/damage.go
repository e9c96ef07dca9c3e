// Package pebbletest makes Pebble stores and damages them, for the tests
// of the backend and of the command line, which must report the damage
// on one line naming the store and the file.
package pebbletest

import (
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
	"github.com/minca-go/minca/record"
)

// Fill writes localtest's corpus into a new store at dir, compacted into
// one table when compact, and returns the versions.
func Fill(t *testing.T, dir string, compact bool) []*record.Version {
	t.Helper()
	kv, err := pebble.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return localtest.Fill(t, kv, func(kv engine.KV) {
		if compact {
			if err := kv.(*pebble.Store).Compact(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// Damaged is a store to damage: its directory, its one table (after Fill
// and a full compaction), and the table's first and last keys.
type Damaged struct {
	Dir, Table  string
	First, Last []byte
}

// NewDamaged fills a store in a new directory, for a test to damage.
func NewDamaged(t *testing.T) *Damaged {
	t.Helper()
	d := &Damaged{Dir: filepath.Join(t.TempDir(), "db")}
	Fill(t, d.Dir, true)
	ssts, _ := filepath.Glob(filepath.Join(d.Dir, "*.sst"))
	if len(ssts) != 1 {
		t.Fatalf("%d tables after a full compaction, want 1", len(ssts))
	}
	d.Table = ssts[0]
	kv, err := pebble.Open(d.Dir, &pebble.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	it, _ := kv.NewIter(nil, nil)
	for it.Next() {
		if d.First == nil {
			d.First = append([]byte(nil), it.Key()...)
		}
		d.Last = append(d.Last[:0], it.Key()...)
	}
	if err := errors.Join(it.Err(), it.Close(), kv.Close()); err != nil {
		t.Fatal(err)
	}
	return d
}

// Layout is where the blocks of the table are.
func (d *Damaged) Layout(t *testing.T) *sstable.Layout {
	t.Helper()
	f, err := vfs.Default.Open(d.Table)
	if err != nil {
		t.Fatal(err)
	}
	r, err := objstorageprovider.NewFileReadable(f, vfs.Default, objstorageprovider.NewReadaheadConfig(), d.Table)
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

// Flip flips one byte of the table, in the middle of the block at offset
// off and length n.
func (d *Damaged) Flip(t *testing.T, off, n uint64) {
	t.Helper()
	b, err := os.ReadFile(d.Table)
	if err != nil {
		t.Fatal(err)
	}
	b[off+n/2] ^= 0x20
	if err := os.WriteFile(d.Table, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TableName is the table's file number, as Pebble names it.
func (d *Damaged) TableName() string { return strings.TrimSuffix(filepath.Base(d.Table), ".sst") }

// manifest is the path of the store's one MANIFEST.
func (d *Damaged) manifest(t *testing.T) string {
	t.Helper()
	ms, _ := filepath.Glob(filepath.Join(d.Dir, "MANIFEST-*"))
	if len(ms) != 1 {
		t.Fatalf("%d MANIFEST files", len(ms))
	}
	return ms[0]
}

// FlipManifest flips a byte in the first record of the store's MANIFEST
// (the version it starts from) and returns its path.
func (d *Damaged) FlipManifest(t *testing.T) string {
	t.Helper()
	m := d.manifest(t)
	b, err := os.ReadFile(m)
	if err != nil {
		t.Fatal(err)
	}
	b[10] ^= 0x01 // past the first chunk's 7-byte header
	if err := os.WriteFile(m, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// CutManifest truncates the store's MANIFEST to half its length and
// returns its path.
func (d *Damaged) CutManifest(t *testing.T) string {
	t.Helper()
	m := d.manifest(t)
	st, err := os.Stat(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(m, st.Size()/2); err != nil {
		t.Fatal(err)
	}
	return m
}

// Damage is one way a store is found damaged: it damages d and returns
// the name a report of it must give.
type Damage struct {
	Name   string
	Damage func(t *testing.T, d *Damaged) string
}

// Damages are the damages a user may meet: a byte flipped in the table
// (in the first data block: the engine's state is read at every open), the
// table missing, the MANIFEST cut short, and a MANIFEST record damaged.
func Damages() []Damage {
	return []Damage{
		{"flipped byte", func(t *testing.T, d *Damaged) string {
			first := d.Layout(t).Data[0].Handle
			d.Flip(t, first.Offset, first.Length)
			return d.TableName()
		}},
		{"missing table", func(t *testing.T, d *Damaged) string {
			if err := os.Remove(d.Table); err != nil {
				t.Fatal(err)
			}
			return d.TableName()
		}},
		{"cut MANIFEST", func(t *testing.T, d *Damaged) string { return filepath.Base(d.CutManifest(t)) }},
		{"damaged MANIFEST", func(t *testing.T, d *Damaged) string { return filepath.Base(d.FlipManifest(t)) }},
	}
}
