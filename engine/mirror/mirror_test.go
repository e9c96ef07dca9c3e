package mirror_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/backends/pebble"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
)

// segmentsOf lists a writer's segment names in a blob store.
func segmentsOf(t testing.TB, b engine.Blobs, writer string) []string {
	t.Helper()
	l, err := b.List(ctx, "segments/"+writer+"/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, x := range l {
		out = append(out, x.Name)
	}
	return out
}

// 02 §4.5, §4.9: after 1,000 edits of one record and a compaction, the
// writer's segments hold one body and 999 stubs, and nothing else.
func TestThousandEditsCompact(t *testing.T) {
	_, b := sharedFolder(t)
	space := enginetest.SpaceID("thousand")
	d := newDevice(t, space, b, 1, &mirror.Options{CompactAt: -1})
	v, err := d.w.First("app.note", canonical.NewObject("text", "edit 0"))
	if err != nil {
		t.Fatal(err)
	}
	admitAll(t, d.s, v)
	for i := 1; i < 1000; i++ {
		if v, err = d.w.Next(v, canonical.NewObject("text", fmt.Sprintf("edit %d", i))); err != nil {
			t.Fatal(err)
		}
		admitAll(t, d.s, v)
		if i%25 == 0 {
			if _, err := d.m.Export(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := d.m.Export(ctx); err != nil {
		t.Fatal(err)
	}
	w, _ := d.m.Writer(ctx)
	before := segmentsOf(t, b, w)
	if len(before) != 40 {
		t.Fatalf("%d segments before compaction", len(before))
	}
	res, err := d.m.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	after := segmentsOf(t, b, w)
	if len(after) != 1 || len(res.Rewrote) != 40 || res.Deleted != 40 {
		t.Fatalf("after compaction: %v (rewrote %d, deleted %d)", after, len(res.Rewrote), res.Deleted)
	}
	if res.Whole != 1 || res.Stubs != 999 || res.BytesFreed == 0 || res.BytesWritten >= res.BytesRewritten ||
		res.BytesAfter-res.BytesBefore != res.BytesWritten-res.BytesFreed || res.BytesChange != res.BytesAfter-res.BytesBefore || res.BytesChange >= 0 {
		t.Fatalf("compaction result %+v", res)
	}
	whole, stubs := 0, 0
	for _, l := range readSegment(t, b, after[0]) {
		v, err := record.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		if v.IsStub() {
			stubs++
		} else {
			whole++
			if v.Seq != 999 {
				t.Fatalf("the body kept is seq %d's", v.Seq)
			}
		}
	}
	if whole != 1 || stubs != 999 {
		t.Fatalf("the compacted segment holds %d bodies and %d stubs", whole, stubs)
	}
	// A newcomer reading the folder holds what the writer holds.
	n := newDevice(t, space, b, 2, nil)
	if _, err := n.m.Import(ctx); err != nil {
		t.Fatal(err)
	}
	sameHeld(t, d.s, n.s, "newcomer")
}

// Two and three engines with different writer ids share one folder, write
// and edit the same records concurrently, some offline and back: they all
// converge to the same held versions and the same current versions.
func TestConvergence(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { convergence(t, n) })
	}
}

func convergence(t *testing.T, n int) {
	_, b := sharedFolder(t)
	space := enginetest.SpaceID(fmt.Sprint("converge", n))
	devs := make([]*device, n)
	for i := range devs {
		// Clocks days apart (F11): nothing may order or collect by them.
		skew := time.Duration(i-1) * 72 * time.Hour
		opts := &mirror.Options{CompactAt: 4, BatchVersions: 7, DeleteGrace: time.Duration(i%2) * time.Minute,
			Now: func() time.Time { return time.Now().Add(skew) }}
		g := &ownDeletes{Blobs: b, t: t}
		devs[i] = newDevice(t, space, g, uint64(i+10), opts)
		w, err := devs[i].m.Writer(ctx)
		if err != nil {
			t.Fatal(err)
		}
		g.own = "segments/" + w + "/"
	}
	// Records everyone starts from.
	var keysMu sync.Mutex
	keys := map[string]bool{}
	for i := 0; i < 6; i++ {
		keys[devs[i%n].create(i)] = true
	}
	for _, d := range devs {
		if err := d.m.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, d := range devs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for step := 0; step < 40; step++ {
				keysMu.Lock()
				ks := sortedKeys(keys)
				keysMu.Unlock()
				switch r := d.rng.IntN(10); {
				case r < 2:
					k := d.create(1000*i + step)
					keysMu.Lock()
					keys[k] = true
					keysMu.Unlock()
				default:
					d.edit(space, ks[d.rng.IntN(len(ks))], step)
				}
				// Device 0 is offline for steps 10–30: it edits, and syncs
				// nothing.
				if i == 0 && step >= 10 && step < 30 {
					continue
				}
				if d.rng.IntN(3) == 0 {
					if err := d.m.Round(ctx); err != nil {
						errs <- fmt.Errorf("device %d step %d: %w", i, step, err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	// Back online: rounds until quiet.
	for pass := 0; pass < 3; pass++ {
		for _, d := range devs {
			if err := d.m.Round(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	ks := sortedKeys(keys)
	want := currents(t, devs[0].s, space, ks)
	for i, d := range devs[1:] {
		sameHeld(t, devs[0].s, d.s, fmt.Sprintf("device 0 and %d", i+1))
		if got := currents(t, d.s, space, ks); got != want {
			t.Fatalf("device %d reads other current versions:\n%s\nagainst\n%s", i+1, got, want)
		}
	}
	st, _ := devs[0].s.Stats(ctx)
	var comp, deleted int64
	for _, d := range devs {
		comp += d.m.Stats().Compactions
		deleted += d.m.Stats().Deleted
	}
	if comp == 0 || deleted == 0 {
		t.Fatalf("%d compactions and %d deletions during the test", comp, deleted)
	}
	t.Logf("%d devices: %d versions held (%d stubs), %d compactions", n, st.Versions, st.Stubs, comp)
}

// Nothing is exported back: a version imported from the folder is not
// written again into this writer's segments.
func TestNoEcho(t *testing.T) {
	_, b := sharedFolder(t)
	space := enginetest.SpaceID("echo")
	a := newDevice(t, space, b, 1, nil)
	c := newDevice(t, space, b, 2, nil)
	a.create(1)
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	w, _ := c.m.Writer(ctx)
	if got := segmentsOf(t, b, w); len(got) != 0 {
		t.Fatalf("the reader wrote back what it read: %v", got)
	}
	sameHeld(t, a.s, c.s, "after one round")
}

func readSegment(t testing.TB, b engine.Blobs, name string) [][]byte {
	t.Helper()
	data, err := b.Get(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := mirror.DecodeSegment(data)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

// A folder emptied or removed stops the mirror: nothing is compacted,
// deleted or re-created (F10).
func TestFolderGone(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("gone")
	a := newDevice(t, space, b, 1, nil)
	for i := 0; i < 3; i++ {
		a.create(i)
		if err := a.m.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	m.RemoveAll("/sync/minca")
	a.create(9)
	if err := a.m.Round(ctx); !errors.Is(err, engine.ErrBlobStoreGone) {
		t.Fatalf("round on a removed folder: %v", err)
	}
	if len(m.Files()) != 0 {
		t.Fatalf("the mirror wrote into a removed folder: %v", m.Files())
	}
}

// Another writer's segments vanishing while the marker stays (a sync
// service replaying deletions, a folder rolled back) stops the mirror
// before it compacts or deletes anything (F10).
func TestWriterVanished(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("vanished")
	a := newDevice(t, space, b, 1, &mirror.Options{CompactAt: 2})
	c := newDevice(t, space, b, 2, &mirror.Options{CompactAt: 2})
	a.create(1)
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	wa, _ := a.m.Writer(ctx)
	for _, f := range m.Files() {
		if strings.Contains(f, wa) {
			_ = m.Remove(f)
		}
	}
	c.create(2)
	c.create(3)
	if _, err := c.m.Export(ctx); err != nil {
		t.Fatal(err)
	}
	wc, _ := c.m.Writer(ctx)
	before := segmentsOf(t, b, wc)
	if _, err := c.m.Import(ctx); err != nil {
		t.Fatal(err) // not a full rescan: no verdict yet
	}
	c2 := newMirror(t, c.s, b, &mirror.Options{CompactAt: 2}) // restart: full rescan
	if err := c2.Round(ctx); !errors.Is(err, mirror.ErrBlobStoreShrunk) {
		t.Fatalf("round after a writer vanished: %v", err)
	}
	if got := segmentsOf(t, b, wc); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("segments changed after the loss was seen: %v → %v", before, got)
	}
}

// Run with no watcher (the in-memory folder has none, like a network
// mount): timers alone bring two running devices to the same state (F9).
func TestRunWithoutWatcher(t *testing.T) {
	_, b := sharedFolder(t)
	space := enginetest.SpaceID("run")
	opts := &mirror.Options{BatchDelay: 5 * time.Millisecond, ImportEvery: 20 * time.Millisecond, CompactAt: 3}
	a := newDevice(t, space, b, 1, opts)
	c := newDevice(t, space, b, 2, opts)
	rctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, d := range []*device{a, c} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = d.m.Run(rctx) }()
	}
	for i := 0; i < 10; i++ {
		a.create(i)
		c.create(100 + i)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(heldSet(t, a.s)) != 20 || len(heldSet(t, c.s)) != 20 {
		if time.Now().After(deadline) {
			t.Fatalf("not converged: %d and %d versions", len(heldSet(t, a.s)), len(heldSet(t, c.s)))
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	sameHeld(t, a.s, c.s, "running devices")
}

// A mirror that imports, is closed with its store, and exports after a
// restart writes nothing it imported — only what the store took in from
// elsewhere, before, during and after the import: the change log names
// each change's source, and no in-memory state is needed.
func TestNoEchoAfterRestart(t *testing.T) {
	_, b := sharedFolder(t)
	space := enginetest.SpaceID("echo restart")
	a := newDevice(t, space, b, 1, nil)
	var imported []string
	for i := 0; i < 5; i++ {
		imported = append(imported, a.create(i))
	}
	if _, err := a.m.Export(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	open := func() *engine.Store {
		kv, err := pebble.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := engine.Open(kv, &engine.Options{Judge: &judge.Judge{}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	w, err := enginetest.NewWriter(space)
	if err != nil {
		t.Fatal(err)
	}
	local := func(s *engine.Store, name string) string {
		v, err := w.First("app.todo", name)
		if err != nil {
			t.Fatal(err)
		}
		admitAll(t, s, v)
		return v.ID
	}
	s := open()
	r, err := mirror.New(s, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{local(s, "before"): true}
	if res, err := r.Import(ctx); err != nil || res.Stored != 5 {
		t.Fatalf("import: %+v %v", res, err)
	}
	want[local(s, "after")] = true
	r.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = open()
	defer s.Close()
	again := newMirror(t, s, b, nil)
	res, err := again.Export(ctx)
	if err != nil || res.Versions != 2 || len(res.Segments) != 1 {
		t.Fatalf("after a restart the mirror exported %+v (%v), want the 2 local versions", res, err)
	}
	for _, l := range readSegment(t, b, res.Segments[0]) {
		v, err := record.Decode(l)
		if err != nil {
			t.Fatal(err)
		}
		if !want[v.ID] {
			t.Fatalf("exported %s (key %s), which came from the folder (imported keys %v)", v.ID, v.Key, imported)
		}
	}
	// Its own later writes still go out.
	local(s, "new")
	if res, err := again.Export(ctx); err != nil || res.Versions != 1 {
		t.Fatalf("a new version was not exported: %+v %v", res, err)
	}
}

// Two mirrors of one store to two blob stores: what came from one is
// exported to the other, and not back to where it came from; what one
// mirror of a blob store imported, another mirror of the same blob store
// does not export back either.
func TestImportedGoesToOtherBlobStores(t *testing.T) {
	_, fa := folderAt(t, "/sync/a")
	_, fb := folderAt(t, "/backup/b")
	if fa.StoreID() == fb.StoreID() {
		t.Fatal("two folders share a store id")
	}
	space := enginetest.SpaceID("two blob stores")
	dev := newDevice(t, space, fa, 1, nil)
	for i := 0; i < 4; i++ {
		dev.create(i)
	}
	if _, err := dev.m.Export(ctx); err != nil {
		t.Fatal(err)
	}
	s := newStore(t)
	ma, mb := newMirror(t, s, fa, nil), newMirror(t, s, fb, nil)
	if res, err := ma.Import(ctx); err != nil || res.Stored != 4 {
		t.Fatalf("import from A: %+v %v", res, err)
	}
	if res, err := mb.Export(ctx); err != nil || res.Versions != 4 {
		t.Fatalf("export to B of what came from A: %+v %v", res, err)
	}
	if res, err := ma.Export(ctx); err != nil || res.Versions != 0 {
		t.Fatalf("export back to A: %+v %v", res, err)
	}
	if res, err := newMirror(t, s, fa, nil).Export(ctx); err != nil || res.Versions != 0 {
		t.Fatalf("another mirror of A exported back: %+v %v", res, err)
	}
	// A third store, mirroring B only, gets all four through B.
	s3 := newStore(t)
	if res, err := newMirror(t, s3, fb, nil).Import(ctx); err != nil || res.Stored != 4 {
		t.Fatalf("import from B: %+v %v", res, err)
	}
	sameHeld(t, s, s3, "through B")
}

// ownDeletes fails the test when a device deletes anything but its own
// segments (F8: never another writer's, never an unknown name).
type ownDeletes struct {
	engine.Blobs
	t   testing.TB
	own string
}

func (g *ownDeletes) Delete(ctx context.Context, name string) error {
	if !strings.HasPrefix(name, g.own) {
		g.t.Errorf("a device with segments under %s deleted %s", g.own, name)
	}
	return g.Blobs.Delete(ctx, name)
}

func (g *ownDeletes) StoreID() string { return g.Blobs.(engine.BlobStoreID).StoreID() }
func (g *ownDeletes) Dirs(ctx context.Context, prefix string) ([]string, error) {
	return g.Blobs.(engine.BlobDirs).Dirs(ctx, prefix)
}

// A closed mirror says so instead of failing later.
func TestMirrorClosed(t *testing.T) {
	_, b := sharedFolder(t)
	m := newMirror(t, newStore(t), b, nil)
	m.Close()
	if _, err := m.Export(ctx); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("export after close: %v", err)
	}
	if _, err := m.Import(ctx); !errors.Is(err, engine.ErrClosed) {
		t.Fatalf("import after close: %v", err)
	}
}
