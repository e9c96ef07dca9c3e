package enginetest

import (
	"github.com/minca-go/minca/canonical"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// The change log keeps, with each change, what its batch left (the
// version's standing, its record's readable current version) and the
// forks found, so the events can be told again after a crash as they were
// first told; the engine's events carry the same change.
func (h *harness) testChangeFacts(t *testing.T) {
	sp := SpaceID("facts")
	w := writer(t, sp)
	s := h.store(t, nil)
	sub := s.Subscribe("", 64)
	defer sub.Close()
	a0 := must[*record.Version](t)(w.First("app.note", "0"))
	a1 := must[*record.Version](t)(w.Next(a0, "1"))
	b0 := must[*record.Version](t)(w.First("app.note", "b"))
	w.Fork("app.note")
	b1 := must[*record.Version](t)(w.First("app.note", "b again")) // b0's line place: a fork
	c0 := must[*record.Version](t)(w.First("app.note", "c"))
	admit(t, s, "p", a0, a1, b0)
	admit(t, s, "p", b1)
	if err := s.SetStanding(ctx, Digest(a1), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	admit(t, s, "p", c0.Stub())
	type fact struct {
		id      string
		kind    engine.ChangeKind
		verdict engine.Verdict
		current string
		other   string
	}
	want := []fact{
		{a0.ID, engine.Stored, engine.Stands, a1.ID, ""}, // a1, in its batch, reads
		{a1.ID, engine.Stored, engine.Stands, a1.ID, ""},
		{b0.ID, engine.Stored, engine.Stands, b0.ID, ""},
		{b1.ID, engine.Forked, engine.Stands, "", b0.ID},
		{b1.ID, engine.Stored, engine.Stands, b1.ID, ""},
		{a1.ID, engine.Withdrew, engine.Withdrawn, "", ""}, // a0, first to stand, is a stub
		{c0.ID, engine.Stored, engine.Stands, "", ""},      // a stub on top: none reads (02 §4.5)
	}
	var got []engine.Change
	for c, err := range s.ChangeLog(ctx, 0) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c)
	}
	if len(got) != len(want) {
		t.Fatalf("%d changes, want %d: %+v", len(got), len(want), got)
	}
	for i, c := range got {
		f := fact{text(c.ID), c.Kind, c.Verdict, text(c.Current), text(c.Other)}
		if c.Kind == engine.Forked && c.ID == Digest(b0) { // a proof names its versions in its own order
			f.id, f.other = text(c.Other), text(c.ID)
		}
		if !c.Facts || c.Seq != uint64(i+1) || f != want[i] {
			t.Fatalf("change %d: %+v, want %+v", i+1, c, want[i])
		}
	}
	// The events carry the changes as logged, the waiting count when it
	// changes.
	seen := 0
	for len(sub.Events()) > 0 {
		e := <-sub.Events()
		switch e.Kind {
		case engine.EventAdmitted, engine.EventStanding, engine.EventLine:
			if e.Seq == 0 || e.Change != got[e.Seq-1] || e.Version == nil || e.Version.ID != e.Change.ID.String() {
				t.Fatalf("%v event %+v: want its change %+v", e.Kind, e, got[e.Seq-1])
			}
			seen++
		}
	}
	if seen != len(want) {
		t.Fatalf("%d events of changes, want %d", seen, len(want))
	}
	a2 := must[*record.Version](t)(w.Next(a1, "2"))
	a3 := must[*record.Version](t)(w.Next(a2, "3"))
	admit(t, s, "p", a3)
	var counts []int64
	for len(sub.Events()) > 0 {
		if e := <-sub.Events(); e.Kind == engine.EventWaiting {
			counts = append(counts, e.Count)
		}
	}
	admit(t, s, "p", a2)
	for len(sub.Events()) > 0 {
		if e := <-sub.Events(); e.Kind == engine.EventWaiting {
			counts = append(counts, e.Count)
		}
	}
	if len(counts) != 2 || counts[0] != 1 || counts[1] != 0 {
		t.Fatalf("waiting events %v, want [1 0]", counts)
	}
	clean(t, s)
}

// text is an id's text, "" for the zero ID (none).
func text(d canonical.ID) string {
	if d.IsZero() {
		return ""
	}
	return d.String()
}
