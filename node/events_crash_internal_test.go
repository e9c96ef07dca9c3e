package node

import (
	"context"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// A fork committed that the node's events never heard of — as when the
// process is killed between the batch's commit and its events — is told
// when the events are read again: the change log keeps it with its batch.
func TestForkOutlivesACrashBeforeItsEvent(t *testing.T) {
	ctx := context.Background()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(ctx, &Options{Dir: t.TempDir(), Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	g, err := n.CreateSpace(ctx, "crash", nil)
	if err != nil {
		t.Fatal(err)
	}
	sg, err := n.sess.current()
	if err != nil {
		t.Fatal(err)
	}
	first := func(key string) *record.Version {
		o := canonical.NewObject("space", g.ID, "collection", "app.chat", "createdAt", "2026-09-26T12:00:00.000Z",
			"key", record.OwnerPart(acc.DID())+"."+key, "seq", 0.0, "log", canonical.NewObject("n", 0.0), "body", canonical.NewObject("k", key))
		v, err := record.Sign(o, sg)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	e := n.ev
	e.sub.Close() // the pump hears of nothing from here on
	<-e.done
	e.mu.Lock()
	start := e.at
	e.mu.Unlock()
	a, b := first("a"), first("b")
	if _, err := n.st.Admit(ctx, "peer", []*record.Version{a, b}); err != nil {
		t.Fatal(err)
	}
	if ps, err := n.st.LineProofs(ctx, g.ID); err != nil || len(ps) != 1 {
		t.Fatalf("line proofs %v %v: want the fork", ps, err)
	}
	st, err := n.st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	evs, _, err := e.replay(start, cursor{seq: uint64(st.Changes)}, replayPage)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, ev.Kind)
		if ev.Kind == EventFork {
			if !(ev.ID == a.ID && ev.Other == b.ID || ev.ID == b.ID && ev.Other == a.ID) || ev.Space != g.ID || ev.Collection != "app.chat" {
				t.Fatalf("the fork event is %+v", ev)
			}
			return
		}
	}
	t.Fatalf("no fork event read again: %v", kinds)
}
