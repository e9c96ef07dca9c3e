package node_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

func next(t *testing.T, s *node.Subscription) node.Event {
	t.Helper()
	select {
	case ev, ok := <-s.Events():
		if !ok {
			t.Fatalf("the subscription ended: %v", s.Err())
		}
		return ev
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("no event in a minute")
	}
	return node.Event{}
}

// Events come in commit order with a cursor; a subscriber that stops,
// and resumes from its last cursor after the node restarts, gets every
// event after it once.
func TestSubscriptionsNeverMissOrRepeatAnEventAcrossARestart(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("events", nil)
	s, err := tn.Subscribe(g.ID, "0", 0)
	if err != nil {
		t.Fatal(err)
	}
	var written []string
	for i := range 50 {
		written = append(written, put(t, tn, g.ID, "app.note", obj("i", float64(i)), nil).ID)
	}
	got := map[string]bool{}
	var last string
	for len(got) < 20 {
		ev := next(t, s)
		if ev.Kind == node.EventCurrent {
			if got[ev.ID] {
				t.Fatalf("event for %s twice", ev.ID)
			}
			got[ev.ID] = true
		}
		last = ev.Cursor
	}
	s.Close()
	tn.reopen(nil)
	for i := range 30 {
		written = append(written, put(t, tn, g.ID, "app.note", obj("j", float64(i)), nil).ID)
	}
	s, err = tn.Subscribe(g.ID, last, 0)
	if err != nil {
		t.Fatal(err)
	}
	prev := last
	for len(got) < len(written) {
		ev := next(t, s)
		if !less(prev, ev.Cursor) {
			t.Fatalf("cursor %s after %s: not in order", ev.Cursor, prev)
		}
		prev = ev.Cursor
		if ev.Kind != node.EventCurrent {
			continue
		}
		if got[ev.ID] {
			t.Fatalf("event for %s twice across the restart", ev.ID)
		}
		got[ev.ID] = true
	}
	for _, id := range written {
		if !got[id] {
			t.Fatalf("no event for %s", id)
		}
	}
	// Live: a write now arrives, once.
	v := put(t, tn, g.ID, "app.note", obj("live", true), nil)
	if ev := next(t, s); ev.ID != v.ID || ev.Kind != node.EventCurrent || ev.Current != v.ID || ev.Key != v.Key {
		t.Fatalf("the live event is %+v, want the current %s", ev, v.ID)
	}
	d, err := tn.Delete(ctx, g.ID, v.Key)
	if err != nil {
		t.Fatal(err)
	}
	if ev := next(t, s); ev.ID != d.ID || ev.Kind != node.EventDeleted {
		t.Fatalf("the delete's event is %+v", ev)
	}
	s.Close()
}

// cursor order: SEQ.I numerically.
func less(a, b string) bool {
	var as, ai, bs, bi int
	parse := func(s string, seq, idx *int) {
		n := 0
		for i := 0; i < len(s); i++ {
			if s[i] == '.' {
				*seq, n = n, 0
				continue
			}
			n = n*10 + int(s[i]-'0')
		}
		*idx = n
	}
	parse(a, &as, &ai)
	parse(b, &bs, &bi)
	return as < bs || as == bs && ai < bi
}

// A subscriber that does not read is dropped with ErrSlow, and writes go
// on unblocked.
func TestASlowSubscriberIsDroppedNotWaitedFor(t *testing.T) {
	tn := newNode(t, &node.Options{Store: "memory:"})
	g := tn.space("slow", nil)
	s, err := tn.Subscribe(g.ID, "", 4)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 40 {
			put(t, tn, g.ID, "app.note", obj("i", float64(i)), nil)
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("writes blocked on a subscriber that does not read")
	}
	deadline := time.After(time.Minute)
	for {
		select {
		case _, ok := <-s.Events():
			if !ok {
				if !errors.Is(s.Err(), node.ErrSlow) {
					t.Fatalf("ended with %v, want ErrSlow", s.Err())
				}
				return
			}
		case <-deadline:
			t.Fatal("the slow subscriber was not dropped")
		}
	}
}

// Withdrawn and restored: a removal takes away what a member wrote that
// it had not seen; the events say so, and a subscriber resuming after
// them from an older cursor gets them from the journal.
func TestWithdrawnEvents(t *testing.T) {
	ctx := context.Background()
	alice, bob := newNode(t, nil), newNode(t, nil)
	g := alice.space("w", roles)
	inv, _ := alice.Invite(ctx, g.ID, []string{"writer"})
	if _, err := bob.JoinInvite(ctx, inv); err != nil {
		t.Fatal(err)
	}
	handOver(t, bob, alice, g.ID)
	start := lastCursor(t, alice)
	if _, err := alice.Remove(ctx, g.ID, bob.Account()); err != nil {
		t.Fatal(err)
	}
	// Bob, not having seen the removal, writes; alice takes it in.
	v := put(t, bob, g.ID, "app.note", obj("late", true), nil)
	handOver(t, bob, alice, g.ID)
	s, err := alice.Subscribe(g.ID, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev := next(t, s)
		if ev.ID == v.ID {
			if ev.Kind != node.EventWithdrawn {
				t.Fatalf("bob's late version: %+v, want withdrawn", ev)
			}
			break
		}
	}
	s.Close()
}

func lastCursor(t *testing.T, tn *testNode) string {
	s, err := tn.Subscribe("", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v := put(t, tn, tn.Registry(), "app.mark", obj(), nil)
	for {
		ev := next(t, s)
		if ev.ID == v.ID {
			return ev.Cursor
		}
	}
}

// A fork found on arrival is an event, kept in the journal: a subscriber
// resuming from before it, after a restart, gets it too. Versions held
// aside are counted in a waiting event.
func TestForkAndWaitingEvents(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("fork", nil)
	start := lastCursor(t, tn)
	k, err := identity.ReadKeyFile(filepath.Join(tn.dir, "session.key"))
	if err != nil {
		t.Fatal(err)
	}
	_, note, _ := tn.Session()
	sg, _ := identity.NewSessionSigner(k, note)
	at := func(key string, log *canonical.Object, seq int, prev string) *record.Version {
		o := canonical.NewObject("space", g.ID, "collection", "app.chat", "createdAt", "2026-09-26T12:00:00.000Z",
			"key", record.OwnerPart(tn.Account())+"."+key, "seq", float64(seq), "log", log, "body", canonical.NewObject("k", key))
		if prev != "" {
			o.Set("prev", prev)
			o.Set("genesis", prev)
		}
		v, err := record.Sign(o, sg)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a := at("a", canonical.NewObject("n", 0.0), 0, "")
	b := at("b", canonical.NewObject("n", 0.0), 0, "")
	if _, err := tn.Store().Admit(ctx, "peer", []*record.Version{a, b}); err != nil {
		t.Fatal(err)
	}
	s, err := tn.Subscribe(g.ID, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	for {
		ev := next(t, s)
		if ev.Kind == node.EventFork {
			if !(ev.ID == a.ID && ev.Other == b.ID || ev.ID == b.ID && ev.Other == a.ID) {
				t.Fatalf("the fork event names %s and %s", ev.ID, ev.Other)
			}
			break
		}
	}
	s.Close()
	tn.reopen(nil)
	s, err = tn.Subscribe(g.ID, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	for ev := next(t, s); ev.Kind != node.EventFork; ev = next(t, s) {
	}
	// A version whose prev is not held waits, and the count is an event.
	lost := at("c", canonical.NewObject("n", 1.0, "prev", a.ID), 0, "")
	later := at("c", canonical.NewObject("n", 2.0, "prev", lost.ID), 1, lost.ID)
	if _, err := tn.Store().Admit(ctx, "peer", []*record.Version{later}); err != nil {
		t.Fatal(err)
	}
	for {
		ev := next(t, s)
		if ev.Kind == node.EventWaiting {
			if ev.Count != 1 {
				t.Fatalf("waiting %d, want 1", ev.Count)
			}
			break
		}
	}
	s.Close()
}

// A cursor ahead of the store's change log is refused at once, as ahead
// of the change log: not after waiting for the node's events to reach it,
// which would end in the other refusal, ahead of the node's events.
func TestACursorAheadOfTheStoreIsRefused(t *testing.T) {
	tn := newNode(t, &node.Options{Store: "memory:"})
	_, err := tn.Subscribe("", "999999.0", 0)
	if err == nil {
		t.Fatal("a cursor ahead of the change log was taken")
	}
	if !strings.Contains(err.Error(), "ahead of the store's change log") {
		t.Fatalf("a cursor ahead of the change log: %v, want it refused as ahead of the store's change log, at once", err)
	}
	if _, err := tn.Subscribe("", "x", 0); err == nil {
		t.Fatal("a cursor that is not one was taken")
	}
}

// The ring is cut back in place once it holds twice EventRing events: a
// subscriber that keeps up gets every event once, in order, across many
// cuts, and one subscribing from a cursor the ring still serves resumes
// there.
func TestEventsAcrossRingCuts(t *testing.T) {
	tn := newNode(t, &node.Options{Store: "memory:", EventRing: 4})
	g := tn.space("ring", nil)
	s, err := tn.Subscribe(g.ID, "", 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var cursors []string
	for i := range 30 {
		id := put(t, tn, g.ID, "app.note", obj("i", float64(i)), nil).ID
		for {
			ev := next(t, s)
			if ev.Kind != node.EventCurrent {
				continue
			}
			if ev.ID != id {
				t.Fatalf("write %d: event for %s, want %s", i, ev.ID, id)
			}
			cursors = append(cursors, ev.Cursor)
			break
		}
	}
	s2, err := tn.Subscribe(g.ID, cursors[27], 64)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if ev := next(t, s2); ev.Cursor != cursors[28] {
		t.Fatalf("resumed from %s at %s, want %s", cursors[27], ev.Cursor, cursors[28])
	}
}
