package node

import (
	"context"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// An event says what its batch left of its record — a version superseded
// in a later batch was current when told — and is the same made from the
// engine's event as read again from the change log; a gap in the change
// sequence is filled from the change log, each change once.
func TestTakeTellsWhatEachBatchLeft(t *testing.T) {
	ctx := context.Background()
	n, g := openWithSpace(t, "take")
	var vs []*record.Version
	for i, key := range []string{"a", "a", "b"} {
		v, err := n.Put(ctx, g.ID, "app.note", canonical.NewObject("i", float64(i)), &PutOptions{Key: key})
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	changeOf := map[string]engine.Change{}
	for c, err := range n.st.ChangeLog(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		changeOf[c.ID.String()] = c
	}
	admitted := func(v *record.Version) engine.Event {
		c := changeOf[v.ID]
		return engine.Event{Kind: engine.EventAdmitted, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: engine.Stands, Seq: c.Seq, Change: c, Version: v}
	}
	current := func(v *record.Version) engine.Event {
		return engine.Event{Kind: engine.EventCurrent, Space: v.Space, Key: v.Key, ID: v.ID, Verdict: engine.Stands}
	}
	fresh := func(at uint64) *events {
		return &events{n: n, wake: make(chan struct{}), at: cursor{seq: at}}
	}
	first := changeOf[vs[0].ID].Seq - 1
	e := fresh(first)
	e.take([]engine.Event{admitted(vs[0]), current(vs[0]), admitted(vs[1]), current(vs[1])})
	if len(e.ring) != 2 {
		t.Fatalf("%d events, want 2: %+v", len(e.ring), e.ring)
	}
	if ev := e.ring[0]; ev.ID != vs[0].ID || ev.Kind != EventCurrent || ev.Current != vs[0].ID || ev.Collection != "app.note" {
		t.Fatalf("the first version's event is %+v, want current, as its batch left it", ev)
	}
	if ev := e.ring[1]; ev.ID != vs[1].ID || ev.Kind != EventCurrent || ev.Current != vs[1].ID {
		t.Fatalf("the last version's event is %+v, want current", ev)
	}
	again, _, err := n.ev.replay(cursor{seq: first}, cursor{seq: changeOf[vs[1].ID].Seq}, replayPage)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 2 || again[0] != e.ring[0] || again[1] != e.ring[1] {
		t.Fatalf("read again: %+v\nmade: %+v", again, e.ring)
	}
	// The engine's events of vs[0] and vs[1] are missing: the change log
	// fills the gap, and vs[2]'s own event is not made twice.
	e = fresh(first)
	e.take([]engine.Event{admitted(vs[2]), current(vs[2])})
	var ids []string
	for _, ev := range e.ring {
		ids = append(ids, ev.ID)
	}
	if len(ids) != 3 || ids[0] != vs[0].ID || ids[1] != vs[1].ID || ids[2] != vs[2].ID {
		t.Fatalf("after a gap the events are %v, want %s %s %s", ids, vs[0].ID, vs[1].ID, vs[2].ID)
	}
	if e.ring[2].Kind != EventCurrent || e.ring[0].Kind != EventCurrent {
		t.Fatalf("after a gap: %+v", e.ring)
	}
}
