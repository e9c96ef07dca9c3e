package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/engine/internal/keys"
	"github.com/minca-go/minca/record"
)

// Check names each way the files index can disagree with the versions:
// a named file left out, a file listed as named by a version that does
// not name it, a file not held that is not listed missing, and a file
// listed missing that is held or that no version of the space names.
func TestCheckFindsFilesIndexDamage(t *testing.T) {
	ctx := context.Background()
	space := enginetest.SpaceID("files index damage")
	held, lacking, stray := []byte("a file held"), []byte("a file not held"), []byte("a file nothing names")
	hd, ld, sd := canonical.IDOf(held), canonical.IDOf(lacking), canonical.IDOf(stray)
	w, err := enginetest.NewWriter(space)
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.First("app.album", canonical.NewObject("n", 1.0), func(d *record.Draft) {
		d.Files = []record.File{{Hash: hd, Size: int64(len(held))}, {Hash: ld, Size: int64(len(lacking))}}
	})
	if err != nil {
		t.Fatal(err)
	}
	vd, _ := keys.ParseExact(v.ID)
	tag := keys.SpaceTag(space)
	value := func(size int) []byte { // an 'n' or 'N' value: uvarint size ‖ space
		return append([]byte{byte(size)}, space...)
	}
	for _, c := range []struct {
		name   string
		damage func(b engine.Batch) error
		want   string
	}{
		{"named file left out", func(b engine.Batch) error { return b.Delete(keys.FileNamedKey(hd, tag, vd)) },
			"version " + v.ID + " names file " + hd.String() + " in space " + space + ", and the index does not list it"},
		{"file named by a version that does not", func(b engine.Batch) error { return b.Set(keys.FileNamedKey(sd, tag, vd), value(len(stray))) },
			"lists file " + sd.String() + " as named by version " + v.ID + " in space " + space + ", which does not name it held whole"},
		{"wrong size", func(b engine.Batch) error { return b.Set(keys.FileNamedKey(ld, tag, vd), value(3)) },
			"file " + ld.String() + " named by version " + v.ID + " says size 3"},
		{"missing file not listed", func(b engine.Batch) error { return b.Delete(keys.FileLacksKey(tag, ld)) },
			"file " + ld.String() + ", named by version " + v.ID + " in space " + space + " and not held, is not listed missing"},
		{"held file listed missing", func(b engine.Batch) error { return b.Set(keys.FileLacksKey(tag, hd), value(len(held))) },
			"lists file " + hd.String() + " missing in space " + space + ", and it is held"},
		{"file nothing names listed missing", func(b engine.Batch) error { return b.Set(keys.FileLacksKey(tag, sd), value(len(stray))) },
			"lists file " + sd.String() + " missing in space " + space + ", which no version held whole there names"},
	} {
		t.Run(c.name, func(t *testing.T) {
			kv := memory.Open(nil)
			s, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}, Files: engine.NewMemoryFiles()})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.PutFile(ctx, hd, held); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Admit(ctx, "p", []*record.Version{v}); err != nil {
				t.Fatal(err)
			}
			if probs, err := s.Check(ctx, nil); err != nil || len(probs) > 0 {
				t.Fatalf("check of a sound store: %q %v", probs, err)
			}
			b, err := kv.NewBatch()
			if err != nil {
				t.Fatal(err)
			}
			if err := c.damage(b); err != nil {
				t.Fatal(err)
			}
			if err := b.Commit(engine.Sync); err != nil {
				t.Fatal(err)
			}
			b.Close()
			probs, err := s.Check(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := "files index: " + c.want
			if len(probs) != 1 || !strings.HasPrefix(probs[0], want) {
				t.Fatalf("check found\n%q\nwant one problem starting\n%q", probs, want)
			}
		})
	}
}
