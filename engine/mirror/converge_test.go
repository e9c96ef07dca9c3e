package mirror_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
)

// syncOnce copies every file of one device's folder that the other lacks
// (a sync service catching up), as paths relative to the roots.
func syncOnce(m *folder.MemFS, from, to string) {
	for _, p := range m.Files() {
		rel, ok := strings.CutPrefix(p, from+"/")
		if !ok {
			continue
		}
		if _, err := m.Stat(to + "/" + rel); err == nil {
			continue
		}
		data, _ := m.ReadFile(p)
		m.WriteFile(to+"/"+rel, data)
	}
}

// Case 8 (issue 12): two devices set up one folder at once, each writing
// a marker and exporting under its own writer; the sync service keeps
// both markers, renaming one (a conflicted copy). Both converge on the
// smallest id, keep their writer ids, sequences and segments, and export
// nothing again; a third device and restarts agree.
func TestMarkersConverge(t *testing.T) {
	m := folder.NewMemFS()
	_ = m.MkdirAll("/one")
	_ = m.MkdirAll("/two")
	open := func(root string) *folder.Store {
		b, err := folder.Open(root, &folder.Options{FS: m, Create: true})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	b1, b2 := open("/one/minca"), open("/two/minca")
	space := enginetest.SpaceID("converge markers")
	d1 := newDevice(t, space, b1, 1, &mirror.Options{CompactAt: -1})
	d2 := newDevice(t, space, b2, 2, &mirror.Options{CompactAt: -1})
	for i := 0; i < 3; i++ {
		d1.create(i)
		d2.create(10 + i)
		for _, d := range []*device{d1, d2} {
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	w1, _ := d1.m.Writer(ctx)
	w2, _ := d2.m.Writer(ctx)
	ids := []string{b1.StoreID(), b2.StoreID()}
	sort.Strings(ids)
	// The sync service: device two's marker lost the race and became a
	// conflicted copy there; device one's came in its place; then every
	// file goes both ways.
	mk2, _ := m.ReadFile("/two/minca/" + folder.MarkerName)
	mk1, _ := m.ReadFile("/one/minca/" + folder.MarkerName)
	_ = m.Remove("/two/minca/" + folder.MarkerName)
	m.WriteFile("/two/minca/minca-store (two's conflicted copy 2026-01-02).json", mk2)
	m.WriteFile("/two/minca/"+folder.MarkerName, mk1)
	syncOnce(m, "/one/minca", "/two/minca")
	syncOnce(m, "/two/minca", "/one/minca")
	for pass := 0; pass < 2; pass++ {
		for _, d := range []*device{d1, d2} {
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
		}
		syncOnce(m, "/one/minca", "/two/minca")
		syncOnce(m, "/two/minca", "/one/minca")
	}
	for i, d := range []*device{d1, d2} {
		if got := d.m.StoreID(); got != ids[0] {
			t.Fatalf("device %d works under %s, want the smallest id %s", i+1, got, ids[0])
		}
		if d.m.Stats().Exported != 3 || d.m.Stats().Clones != 0 {
			t.Fatalf("device %d: %+v; want its 3 versions exported once", i+1, d.m.Stats())
		}
	}
	if w, _ := d1.m.Writer(ctx); w != w1 {
		t.Fatal("device one's writer changed")
	}
	if w, _ := d2.m.Writer(ctx); w != w2 {
		t.Fatal("device two's writer changed")
	}
	sameHeld(t, d1.s, d2.s, "converged devices")
	if n := len(heldSet(t, d1.s)); n != 6 {
		t.Fatalf("%d versions held, want 6", n)
	}
	// Restarted, each finds its writer again and has nothing to export.
	for i, d := range []*device{d1, d2} {
		b := open([]string{"/one/minca", "/two/minca"}[i])
		if b.StoreID() != ids[0] {
			t.Fatalf("reopened folder %d: id %s", i+1, b.StoreID())
		}
		r := newMirror(t, d.s, b, &mirror.Options{CompactAt: -1})
		if err := r.Round(ctx); err != nil {
			t.Fatal(err)
		}
		if w, _ := r.Writer(ctx); w != []string{w1, w2}[i] || r.Stats().Exported != 0 {
			t.Fatalf("device %d after a restart: writer %s, %+v", i+1, w, r.Stats())
		}
		if got := len(segmentsOf(t, b, []string{w1, w2}[i])); got != 3 {
			t.Fatalf("device %d's segments: %d, want its 3", i+1, got)
		}
	}
	// A third device agrees, and reads all.
	n := newDevice(t, space, open("/two/minca"), 3, nil)
	if err := n.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if n.m.StoreID() != ids[0] {
		t.Fatal("a newcomer works under another id")
	}
	sameHeld(t, d1.s, n.s, "newcomer")
}
