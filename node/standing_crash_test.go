package node_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/node"
)

// A standing change is in the store's change log with the batch that made
// it: its event is made again after a restart even when the node never
// journaled it (the journal lost, as when the process dies between the
// store's commit and the event), at the cursor it had live.
func TestAStandingChangeOutlivesALostJournal(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("standing", nil)
	v := put(t, tn, g.ID, "app.note", obj("n", 1.0), nil)
	start := lastCursor(t, tn)
	live, err := tn.Subscribe(g.ID, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := tn.Store().SetStanding(ctx, enginetest.Digest(v), engine.Withdrawn); err != nil {
		t.Fatal(err)
	}
	var was node.Event
	for {
		ev := next(t, live)
		if ev.ID == v.ID {
			was = ev
			break
		}
	}
	live.Close()
	if was.Kind != node.EventWithdrawn || was.Current != "" {
		t.Fatalf("live: %+v, want withdrawn, nothing current", was)
	}
	if err := tn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(tn.dir, "events.log")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	tn.open(nil)
	again, err := tn.Subscribe(g.ID, start, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for {
		ev := next(t, again)
		if ev.ID == v.ID {
			if ev.Kind != node.EventWithdrawn || ev.Cursor != was.Cursor {
				t.Fatalf("after a restart without the journal: %+v; live it was %+v", ev, was)
			}
			return
		}
	}
}
