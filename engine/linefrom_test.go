package engine_test

import (
	"context"
	"testing"

	"github.com/minca-go/minca/backends/memory"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
)

// 02 §4.10: LineHeldFrom tells whether any place of one writer's line from
// n on holds a version — past a hole too — and sees neither another
// collection's line nor another writer's.
func TestLineHeldFrom(t *testing.T) {
	ctx := context.Background()
	sp := enginetest.SpaceID("line held from")
	w, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	other, err := enginetest.NewWriter(sp)
	if err != nil {
		t.Fatal(err)
	}
	v := mustV(t)
	v0, v1 := v(w.First("app.chat", "0")), v(w.First("app.chat", "1"))
	_ = v(w.First("app.chat", "2")) // never stored: a hole at place 2
	v3 := v(w.First("app.chat", "3"))
	o0 := v(other.First("app.chat", "other's 0"))
	s, err := engine.Open(memory.Open(nil), &engine.Options{Judge: enginetest.Judge{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	admitAll(t, s, v0, v1, v3, o0)
	for _, c := range []struct {
		author, coll string
		n            int64
		want         bool
	}{
		{w.Key.DID(), "app.chat", 0, true},
		{w.Key.DID(), "app.chat", 2, true}, // the hole, and place 3 after it
		{w.Key.DID(), "app.chat", 3, true},
		{w.Key.DID(), "app.chat", 4, false},
		{w.Key.DID(), "app.chat", 1 << 40, false},
		{w.Key.DID(), "app.other", 0, false},
		{other.Key.DID(), "app.chat", 0, true},
		{other.Key.DID(), "app.chat", 1, false},
	} {
		got, err := s.LineHeldFrom(ctx, sp, c.author, c.coll, c.n)
		if err != nil || got != c.want {
			t.Errorf("%s %s from %d: held %v (%v), want %v", c.author[:16], c.coll, c.n, got, err, c.want)
		}
	}
	if _, err := s.LineHeldFrom(ctx, sp, w.Key.DID(), "app.chat", -1); err == nil {
		t.Error("a place before 0 answered")
	}
}
