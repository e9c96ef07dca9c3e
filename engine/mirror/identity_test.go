package mirror_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/folder"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/mirror"
)

// Case 7 (issue 12): a store that mirrored to a folder refuses another
// blob store found there — the folder emptied or removed and set up again
// — naming both ids, for export, import and rounds alike; told to adopt
// it, it exports everything there anew. A folder it never mirrored to is
// set up without ceremony.
func TestFolderReplacedRefused(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("replaced")
	a := newDevice(t, space, b, 1, nil)
	for i := 0; i < 3; i++ {
		a.create(i)
		if err := a.m.Round(ctx); err != nil {
			t.Fatal(err)
		}
	}
	was := b.StoreID()
	m.RemoveAll("/sync/minca") // emptied by a sync service, or removed
	b2, err := folder.Open("/sync/minca", &folder.Options{FS: m, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if b2.StoreID() == was {
		t.Fatal("the same id twice")
	}
	before := m.Files()
	for name, step := range map[string]func(*mirror.Mirror) error{
		"round":  func(r *mirror.Mirror) error { return r.Round(ctx) },
		"export": func(r *mirror.Mirror) error { _, err := r.Export(ctx); return err },
		"import": func(r *mirror.Mirror) error { _, err := r.Import(ctx); return err },
		"writer": func(r *mirror.Mirror) error { _, err := r.Writer(ctx); return err },
	} {
		err := step(newMirror(t, a.s, b2, nil))
		var ce *mirror.StoreChangedError
		if !errors.Is(err, mirror.ErrBlobStoreChanged) || !errors.As(err, &ce) {
			t.Fatalf("%s on a replaced folder: %v", name, err)
		}
		if ce.Remembered != was || ce.Found != b2.StoreID() || !ce.Empty || ce.Location != "/sync/minca" {
			t.Fatalf("%s: %+v", name, ce)
		}
		if !strings.Contains(err.Error(), was) || !strings.Contains(err.Error(), b2.StoreID()) {
			t.Fatalf("%s: the message names both: %v", name, err)
		}
	}
	if got := m.Files(); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Fatalf("a refused mirror wrote %v", got)
	}

	// Told to adopt it: everything is exported there again, and a newcomer
	// reads it all.
	ad := newMirror(t, a.s, b2, &mirror.Options{Adopt: true})
	if err := ad.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ad.Stats().Exported; got != 3 {
		t.Fatalf("adopting exported %d versions, want 3", got)
	}
	n := newDevice(t, space, b2, 2, nil)
	if err := n.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	sameHeld(t, a.s, n.s, "after adopting")
	// Adopted once, it is the one remembered: no flag needed from now on.
	if err := newMirror(t, a.s, b2, nil).Round(ctx); err != nil {
		t.Fatalf("after adopting: %v", err)
	}

	// A folder this store never mirrored to: no ceremony.
	_, fresh := folderAt(t, "/elsewhere/minca")
	if err := newMirror(t, a.s, fresh, nil).Round(ctx); err != nil {
		t.Fatalf("a new folder: %v", err)
	}
}

// Remembered reads, and only reads, the id a store found at a location:
// none before it mirrored there, the marker's after, none elsewhere. An
// opener refuses with it before it sets up anything; the refusal, with
// nothing found there, names the one remembered.
func TestRemembered(t *testing.T) {
	_, b := sharedFolder(t)
	a := newDevice(t, enginetest.SpaceID("remembered"), b, 1, nil)
	if id, err := mirror.Remembered(ctx, a.s, b.Locate()); err != nil || id != "" {
		t.Fatalf("before mirroring: %q %v", id, err)
	}
	a.create(1)
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if id, err := mirror.Remembered(ctx, a.s, b.Locate()); err != nil || id != b.StoreID() {
		t.Fatalf("after mirroring: %q %v, want %s", id, err, b.StoreID())
	}
	for _, loc := range []string{"/elsewhere/minca", ""} {
		if id, err := mirror.Remembered(ctx, a.s, loc); err != nil || id != "" {
			t.Fatalf("%q: %q %v", loc, id, err)
		}
	}
	err := &mirror.StoreChangedError{Location: b.Locate(), Remembered: b.StoreID(), Empty: true}
	if msg := err.Error(); !strings.Contains(msg, b.StoreID()) || !strings.Contains(msg, "holds none") || !errors.Is(err, mirror.ErrBlobStoreChanged) {
		t.Fatalf("nothing found: %q", msg)
	}
}

// Another store put where this one mirrored (not empty) is refused too,
// and says it is not empty.
func TestFolderSwappedRefused(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("swapped")
	a := newDevice(t, space, b, 1, nil)
	a.create(1)
	if err := a.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	m.RemoveAll("/sync/minca")
	other, err := folder.Open("/sync/minca", &folder.Options{FS: m, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	o := newDevice(t, space, other, 2, nil)
	o.create(2)
	if err := o.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	var ce *mirror.StoreChangedError
	if err := newMirror(t, a.s, other, nil).Round(ctx); !errors.As(err, &ce) || ce.Empty {
		t.Fatalf("a swapped folder: %v", err)
	}
}

// A blob store that lost this writer's segments while its marker stayed
// (F10) is refused with ErrBlobStoreShrunk; adopted, everything is
// exported again.
func TestShrunkAdopted(t *testing.T) {
	m, b := sharedFolder(t)
	space := enginetest.SpaceID("shrunk adopt")
	a := newDevice(t, space, b, 1, &mirror.Options{CompactAt: -1})
	writeAndExport(t, a, 0, 2)
	writeAndExport(t, a, 10, 2)
	w, _ := a.m.Writer(ctx)
	for _, f := range m.Files() {
		if strings.Contains(f, w) {
			_ = m.Remove(f)
		}
	}
	if err := newMirror(t, a.s, b, nil).Round(ctx); !errors.Is(err, mirror.ErrBlobStoreShrunk) {
		t.Fatalf("round after our segments went: %v", err)
	}
	ad := newMirror(t, a.s, b, &mirror.Options{Adopt: true, CompactAt: -1})
	if err := ad.Round(ctx); err != nil {
		t.Fatal(err)
	}
	if ad.Stats().Exported != 4 {
		t.Fatalf("adopting exported %d, want 4", ad.Stats().Exported)
	}
	n := newDevice(t, space, b, 2, nil)
	if err := n.m.Round(ctx); err != nil {
		t.Fatal(err)
	}
	sameHeld(t, a.s, n.s, "after adopting the shrunk store")
}

// Options that make no sense are refused.
func TestOptionsValidated(t *testing.T) {
	_, b := sharedFolder(t)
	for _, o := range []*mirror.Options{{GoneGrace: -1}, {Reread: -1}, {DeleteGrace: -1}} {
		if _, err := mirror.New(newStore(t), b, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if _, err := mirror.Verify(ctx, b, &mirror.VerifyOptions{Reread: -1}); err == nil {
		t.Error("a negative Reread accepted by Verify")
	}
	var _ engine.BlobLocator = b
}
