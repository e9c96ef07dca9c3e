package mirror_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

var ctx = context.Background()

func newStore(t testing.TB) *engine.Store {
	t.Helper()
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: &judge.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// sharedFolder is one synced folder, in memory, as every device sees it.
func sharedFolder(t testing.TB) (*folder.MemFS, *folder.Store) {
	t.Helper()
	return folderAt(t, "/sync/minca")
}

// folderAt is a new folder store at path, on a filesystem of its own.
func folderAt(t testing.TB, path string) (*folder.MemFS, *folder.Store) {
	t.Helper()
	m := folder.NewMemFS()
	_ = m.MkdirAll(filepath.Dir(path))
	b, err := folder.Open(path, &folder.Options{FS: m, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return m, b
}

func newMirror(t testing.TB, s *engine.Store, b engine.Blobs, o *mirror.Options) *mirror.Mirror {
	t.Helper()
	m, err := mirror.New(s, b, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func admitAll(t testing.TB, s *engine.Store, vs ...*record.Version) {
	t.Helper()
	outs, err := s.Admit(ctx, "local", vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Verdict == engine.Refused {
			t.Fatalf("%s refused: %v", o.ID, o.Refusal)
		}
	}
}

// heldSet is `store export` as a set: every held version as held.
func heldSet(t testing.TB, s *engine.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	for b, err := range s.ExportJSON(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		v, err := record.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		out[v.ID] = string(b)
	}
	return out
}

func sameHeld(t testing.TB, a, b *engine.Store, what string) {
	t.Helper()
	ha, hb := heldSet(t, a), heldSet(t, b)
	if len(ha) != len(hb) {
		t.Fatalf("%s: %d versions held against %d", what, len(ha), len(hb))
	}
	for id, x := range ha {
		if hb[id] != x {
			if _, ok := hb[id]; !ok {
				t.Fatalf("%s: %s missing", what, id)
			}
			t.Fatalf("%s: %s held differently:\n%s\n%s", what, id, x, hb[id])
		}
	}
}

// currents is every record's current version id.
func currents(t testing.TB, s *engine.Store, space string, keys []string) string {
	t.Helper()
	var out []string
	for _, k := range keys {
		v, err := s.Current(ctx, space, k)
		id := "-"
		if err == nil {
			id = v.ID
		}
		out = append(out, k+"="+id)
	}
	return strings.Join(out, "\n")
}

// device is one engine with its own key, editing records of one space.
type device struct {
	t   testing.TB
	s   *engine.Store
	w   *enginetest.Writer
	m   *mirror.Mirror
	rng *rand.Rand
}

func newDevice(t testing.TB, space string, b engine.Blobs, seed uint64, o *mirror.Options) *device {
	w, err := enginetest.NewWriter(space)
	if err != nil {
		t.Fatal(err)
	}
	s := newStore(t)
	return &device{t: t, s: s, w: w, m: newMirror(t, s, b, o), rng: rand.New(rand.NewPCG(seed, seed))}
}

// create writes a new record and returns its key.
func (d *device) create(i int) string {
	v, err := d.w.First("app.todo", canonical.NewObject("text", fmt.Sprintf("todo %d", i)))
	if err != nil {
		d.t.Fatal(err)
	}
	admitAll(d.t, d.s, v)
	return v.Key
}

// edit writes the next version after what this device reads as current.
func (d *device) edit(space, key string, i int) {
	cur, err := d.s.Current(ctx, space, key)
	if err != nil {
		return // not here yet, or deleted
	}
	var v *record.Version
	if d.rng.IntN(10) == 0 {
		v, err = d.w.Delete(cur)
	} else {
		v, err = d.w.Next(cur, canonical.NewObject("text", fmt.Sprintf("edit %d by %s", i, d.w.Key.DID()[len(d.w.Key.DID())-6:])))
	}
	if err != nil {
		d.t.Fatal(err)
	}
	admitAll(d.t, d.s, v)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
