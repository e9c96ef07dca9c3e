// Package localtest is what the tests of the local key-value backends
// (backends/pebble, backends/sqlite) share: a store filled through the
// engine and read back whole, a directory's listing to prove that nothing
// was written, and the damage report of the real minca binary. Only tests
// import it.
package localtest

import (
	"context"
	"errors"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/internal/race"
	"github.com/minca-go/minca/record"
)

// Versions is how many versions Fill admits: enough for several hundred
// KiB, many blocks or pages (about 800 KiB in one Pebble table; 330 KiB,
// still about eighty 4 KiB blocks or pages, under -race, where each
// version costs several times more to write and check).
var Versions = 1000

func init() {
	if race.Enabled {
		Versions = 400
	}
}

// Fill admits a corpus into a new store on kv through the engine with the
// node's judge; before is called (if not nil) with the store still open,
// after the versions are in (to flush or compact it). It closes the store
// and returns the versions.
func Fill(t *testing.T, kv engine.KV, before func(engine.KV)) []*record.Version {
	t.Helper()
	st, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	var vs []*record.Version
	err = enginetest.Corpus(enginetest.SpaceID("localtest"), enginetest.CorpusOptions{Versions: Versions, Seed: 12}, func(v *record.Version) error {
		vs = append(vs, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	outs, err := st.Admit(context.Background(), "fill", vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Verdict != engine.Stands {
			t.Fatalf("%s: %v (%v)", o.ID, o.Verdict, o.Refusal)
		}
	}
	if before != nil {
		before(kv)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return vs
}

// ReadBack opens the engine on a store opened read-only, requires it to
// hold exactly the versions vs, to check clean, and a write to fail with
// engine.ErrReadOnly. It closes the store.
func ReadBack(t *testing.T, kv engine.KV, vs []*record.Version) {
	t.Helper()
	if got, want := Summary(ReadAll(t, kv)), Summary(IDs(vs)); got != want {
		t.Fatalf("read back %s, wrote %s", got, want)
	}
}

// ReadAll opens the engine on a store opened read-only, requires it to
// check clean and a write to fail with engine.ErrReadOnly, closes it, and
// returns the ids of the versions it holds.
func ReadAll(t *testing.T, kv engine.KV) []string {
	t.Helper()
	ctx := context.Background()
	st, err := engine.Open(kv, &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var ids []string
	for v, err := range st.Export(ctx, "") {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	probs, err := st.Check(ctx, nil)
	if err != nil || len(probs) > 0 {
		t.Fatalf("check: %v %q", err, probs)
	}
	w, err := enginetest.NewWriter(enginetest.SpaceID("localtest"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := w.First("app.todo.item", canonical.NewObject("text", "more"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Admit(ctx, "write", []*record.Version{v}); !errors.Is(err, engine.ErrReadOnly) {
		t.Fatalf("a write to a store open read-only: %v, want ErrReadOnly", err)
	}
	if _, err := kv.NewBatch(); !errors.Is(err, engine.ErrReadOnly) {
		t.Fatalf("a batch on a store open read-only: %v, want ErrReadOnly", err)
	}
	return ids
}
