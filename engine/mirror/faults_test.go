package mirror_test

import (
	"context"
	"errors"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
	"github.com/minca-go/minca/record"
)

// The folder fault catalog (../shared/research/folder-s3-faults.md, F1–F13)
// at the level of the mirror, through the in-memory filesystem playing the
// sync service.

const root = "/sync/minca/"

// writeAndExport makes n records on d and exports them as one segment,
// returning its name.
func writeAndExport(t *testing.T, d *device, from, n int) string {
	t.Helper()
	for i := 0; i < n; i++ {
		d.create(from + i)
	}
	res, err := d.m.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Segments) != 1 {
		t.Fatalf("export wrote %v", res.Segments)
	}
	return res.Segments[0]
}

// F1, F5: conflict copies of every service's naming and a second name for
// one content make no writer and no version of their own. Without salvage
// they are ignored; with it, a copy whose original is gone is read once,
// by content.
func TestConflictCopiesAndSalvage(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("copies")
	a := newDevice(t, space, b, 1, nil)
	seg := writeAndExport(t, a, 0, 3)
	data, _ := b.Get(ctx, seg)
	base := strings.TrimSuffix(seg, ".seg")
	for _, c := range []string{
		base + " (Bob's conflicted copy 2026-01-02).seg",
		base + " 2.seg",
		base + ".sync-conflict-20260102-101010-ABCDEF7.seg",
		base + "-DESKTOP-4F2.seg",
		base + " (1).seg",
		"segments 2/" + strings.TrimPrefix(seg, "segments/"),
	} {
		m.WriteFile(root+c, data)
	}
	// The original goes (a sync service kept only the copy).
	if err := b.Delete(ctx, seg); err != nil {
		t.Fatal(err)
	}
	plain := newDevice(t, space, b, 2, nil)
	res, err := plain.m.Import(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Versions != 0 || res.Segments != 0 {
		t.Fatalf("without salvage, copies were read: %+v", res)
	}
	salv := newDevice(t, space, b, 3, &mirror.Options{Salvage: true})
	for pass := 0; pass < 2; pass++ {
		if _, err := salv.m.Import(ctx); err != nil {
			t.Fatal(err)
		}
	}
	st := salv.m.Stats()
	if st.Salvaged != 6 || st.Stored != 3 || st.Admitted != 18 {
		t.Fatalf("salvage: %+v", st)
	}
	sameHeld(t, a.s, salv.s, "salvaged")
	// The copies are still there: salvage never deletes.
	n := 0
	for _, f := range m.Files() {
		if strings.Contains(f, "conflict") {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("copies removed: %v", m.Files())
	}
}

// F2: temp and staging files of every service, and hidden directories,
// are never ingested.
func TestTempFilesIgnored(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("temps")
	a := newDevice(t, space, b, 1, nil)
	seg := writeAndExport(t, a, 0, 2)
	data, _ := b.Get(ctx, seg)
	dir, file := path.Split(seg)
	for _, tmp := range []string{
		dir + ".syncthing." + file + ".tmp",
		dir + "~syncthing~" + file + ".tmp",
		dir + ".minca-0102030405060708.tmp",
		".dropbox.cache/" + seg,
		".stversions/" + seg,
		".Trash/" + file,
	} {
		m.WriteFile(root+tmp, data)
	}
	if err := b.Delete(ctx, seg); err != nil {
		t.Fatal(err)
	}
	c := newDevice(t, space, b, 2, &mirror.Options{Salvage: true})
	res, err := c.m.Import(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Versions != 0 {
		t.Fatalf("temp files were ingested: %+v", res)
	}
}

// F3: a placeholder is "not yet available", retried later, never taken as
// missing; once downloaded it is read.
func TestPlaceholderRetried(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("placeholder")
	a := newDevice(t, space, b, 1, nil)
	seg := writeAndExport(t, a, 0, 2)
	m.SetDataless(root+seg, true)
	c := newDevice(t, space, b, 2, nil)
	res, err := c.m.Import(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Unavailable != 1 || res.Versions != 0 {
		t.Fatalf("placeholder: %+v", res)
	}
	m.SetDataless(root+seg, false)
	res, err = c.m.Import(ctx)
	if err != nil || res.Versions != 2 {
		t.Fatalf("after download: %+v %v", res, err)
	}
	sameHeld(t, a.s, c.s, "after download")
}

// F4: a file still arriving under its final name (its bytes change
// between two reads) is skipped, not reported, and read once whole; a torn
// file that stays torn across reads Reread apart is reported bad by name
// — with an unknown count, its trailer being gone — and read once a whole
// copy arrives.
func TestTornSegmentRetried(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("torn")
	a := newDevice(t, space, b, 1, nil)
	seg := writeAndExport(t, a, 0, 5)
	whole, _ := b.Get(ctx, seg)

	// Arriving: each read finds more of it.
	g := &growing{Blobs: b, name: seg, whole: whole}
	c := newDevice(t, space, g, 2, &mirror.Options{Reread: time.Millisecond})
	res, err := c.m.Import(ctx)
	if err != nil || res.Versions != 0 || res.Unavailable != 1 || len(res.Bad) != 0 {
		t.Fatalf("a file still arriving: %+v %v", res, err)
	}
	if g.reads < 2 {
		t.Fatalf("read %d times: a failing segment is read again before it is judged", g.reads)
	}
	g.reads = 10 // whole from now on
	c2 := newMirror(t, c.s, g, &mirror.Options{Reread: time.Millisecond})
	if res, err := c2.Import(ctx); err != nil || res.Versions != 5 {
		t.Fatalf("once whole: %+v %v", res, err)
	}
	sameHeld(t, a.s, c.s, "after the file arrived")

	// Torn, and it stays so.
	m.WriteFile(root+seg, whole[:len(whole)/2]) // a sync client shipping half
	d := newDevice(t, space, b, 3, &mirror.Options{Reread: time.Millisecond})
	for pass := 0; pass < 2; pass++ {
		res, err := d.m.Import(ctx)
		if !errors.Is(err, mirror.ErrBadSegment) || res.Versions != 0 || len(res.Bad) != 1 {
			t.Fatalf("pass %d over a torn segment: %+v %v", pass, res, err)
		}
		var be *mirror.BadSegmentsError
		if !errors.As(err, &be) || be.Segments[0].Name != seg || be.Segments[0].Versions != -1 || be.Segments[0].Code != "segment/magic" {
			t.Fatalf("the error does not name it: %v", err)
		}
		if !strings.Contains(err.Error(), seg) || !strings.Contains(err.Error(), "unknown") {
			t.Fatalf("message: %v", err)
		}
	}
	m.WriteFile(root+seg, whole)
	res, err = d.m.Import(ctx)
	if err != nil || res.Versions != 5 || len(res.Bad) != 0 {
		t.Fatalf("the whole file was not read: %+v %v", res, err)
	}
	sameHeld(t, a.s, d.s, "after the file completed")
}

// growing serves one name as a file being filled in: each Get returns
// more of it, until whole.
type growing struct {
	engine.Blobs
	name  string
	whole []byte
	reads int
}

func (g *growing) Get(ctx context.Context, name string) ([]byte, error) {
	if name != g.name {
		return g.Blobs.Get(ctx, name)
	}
	g.reads++
	n := min(len(g.whole), len(g.whole)*g.reads/4)
	return g.whole[:n], nil
}

func (g *growing) StoreID() string { return g.Blobs.(engine.BlobStoreID).StoreID() }

// F7, F8: a compacted-away segment of ours that comes back is read
// idempotently by others, never re-adopted into our sequence, and removed
// by our next compaction; another writer's segments and unknown names are
// never deleted.
func TestResurrectedAndOnlyOwnDeleted(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("resurrect")
	opts := &mirror.Options{CompactAt: -1}
	a := newDevice(t, space, b, 1, opts)
	c := newDevice(t, space, b, 2, opts)
	s1 := writeAndExport(t, a, 0, 2)
	s1data, _ := b.Get(ctx, s1)
	writeAndExport(t, a, 10, 2)
	cseg := writeAndExport(t, c, 20, 2)
	m.WriteFile(root+"segments/notes.txt", []byte("a person's file"))
	res, err := a.m.Compact(ctx)
	if err != nil || len(res.Rewrote) != 2 || res.Deleted != 2 {
		t.Fatalf("compact: %+v %v", res, err)
	}
	if _, err := b.Get(ctx, cseg); err != nil {
		t.Fatalf("another writer's segment: %v", err)
	}
	if _, err := b.Get(ctx, "segments/notes.txt"); err != nil {
		t.Fatalf("an unknown file: %v", err)
	}
	// A device that was offline puts s1 back.
	m.WriteFile(root+s1, s1data)
	wa, _ := a.m.Writer(ctx)
	a.create(30)
	exp, err := a.m.Export(ctx)
	if err != nil || len(exp.Segments) != 1 {
		t.Fatal(err)
	}
	if a.m.Stats().Clones != 0 {
		t.Fatal("our own old segment was taken for a clone")
	}
	if w, _ := a.m.Writer(ctx); w != wa {
		t.Fatal("the writer id changed")
	}
	if !strings.Contains(exp.Segments[0], "/000000000004-") {
		t.Fatalf("the next segment is %s: the sequence moved back", exp.Segments[0])
	}
	if err := c.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = a.m.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, s1); err == nil {
		t.Fatalf("the resurrected segment survived compaction: %+v", res)
	}
	if got := segmentsOf(t, b, wa); len(got) != 1 {
		t.Fatalf("own segments after the second compaction: %v", got)
	}
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	sameHeld(t, a.s, c.s, "after compactions")
}

// F11: two devices with one writer id (a restored disk image): both
// segments at one sequence are kept and read, the clone is flagged, and
// the store that notices takes a new writer id.
func TestClonedWriter(t *testing.T) {
	_, b := sharedFolder(t)
	space := enginetest.SpaceID("clone")
	a := newDevice(t, space, b, 1, nil)
	writeAndExport(t, a, 0, 2)
	// The clone: another store with a's mirror state (what a disk image
	// restore gives), then each writes on its own.
	c := newDevice(t, space, b, 2, nil)
	for _, line := range heldSet(t, a.s) {
		v, err := record.Decode([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		admitAll(t, c.s, v)
	}
	copyMeta(t, a.s, c.s, b)
	c.m.Close()
	c.m = newMirror(t, c.s, b, nil)
	wa, _ := a.m.Writer(ctx)
	if wc, _ := c.m.Writer(ctx); wc != wa {
		t.Fatal("the clone has another writer id")
	}
	a.create(10)
	sa, err := a.m.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.create(20)
	sc, err := c.m.Export(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if sa.Segments[0] == sc.Segments[0] || sa.Segments[0][:len("segments/")+20+13] != sc.Segments[0][:len("segments/")+20+13] {
		t.Fatalf("want two segments at one seq: %v %v", sa.Segments, sc.Segments)
	}
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if a.m.Stats().Clones != 1 {
		t.Fatal("the clone was not detected")
	}
	if w, _ := a.m.Writer(ctx); w == wa {
		t.Fatal("the writer id did not rotate")
	}
	if err := c.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if len(segmentsOf(t, b, wa)) != 3 {
		t.Fatalf("both clones' segments must stay: %v", segmentsOf(t, b, wa))
	}
	// A third device reads everything from both.
	n := newDevice(t, space, b, 3, nil)
	if err := n.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	sameHeld(t, a.s, n.s, "third device and a")
	sameHeld(t, c.s, n.s, "third device and the clone")
}

// copyMeta copies the mirror's meta values from one store to another.
func copyMeta(t *testing.T, from, to *engine.Store, b engine.Blobs) {
	t.Helper()
	sid := b.(engine.BlobStoreID).StoreID()
	w, _ := mirror.New(from, b, nil)
	defer w.Close()
	id, _ := w.Writer(ctx)
	for _, k := range []string{"mirror/" + sid + "/writer", "mirror/" + sid + "/hashes/" + id + "/0"} {
		v, ok, err := from.Meta(ctx, k)
		if err != nil || !ok {
			t.Fatalf("meta %s: %v %v", k, ok, err)
		}
		if err := to.SetMeta(ctx, k, v); err != nil {
			t.Fatal(err)
		}
	}
}
