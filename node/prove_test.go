package node_test

import (
	"context"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// forkedWriter is a member of the space g whose key writes twice at one
// place of its app.chat line: a copy of the key elsewhere.
func forkedWriter(t *testing.T, ada *testNode, g *space.Genesis) (v1, w1 *record.Version) {
	t.Helper()
	ctx := context.Background()
	mal, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ada.Assign(ctx, g.ID, mal.DID(), []string{"writer"}); err != nil {
		t.Fatal(err)
	}
	h, ok, err := ada.Judge().History(ctx, g.ID)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	var seen []any
	for _, id := range h.Heads() {
		seen = append(seen, id)
	}
	first := func(text string) *record.Version {
		key, err := record.FreshKey(mal.DID())
		if err != nil {
			t.Fatal(err)
		}
		v, err := record.Sign(obj("collection", "app.chat", "createdAt", "2026-01-01T00:00:00.000Z", "key", key, "space", g.ID,
			"seq", float64(0), "log", obj("n", float64(0)), "seen", seen, "body", obj("t", text)), mal)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	return first("here"), first("there")
}

// proofsIn lists the sys.fork versions a node holds in a space.
func proofsIn(t *testing.T, tn *testNode, spaceID string) []*record.Version {
	t.Helper()
	var out []*record.Version
	for v, err := range tn.Store().Export(context.Background(), spaceID) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Collection == "sys.fork" {
			out = append(out, v)
		}
	}
	return out
}

// waitProofs waits until a node holds n proofs in a space.
func waitProofs(t *testing.T, tn *testNode, spaceID string, n int) []*record.Version {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ps := proofsIn(t, tn, spaceID)
		if len(ps) >= n || time.Now().After(deadline) {
			return ps
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// 02 §4.10: "A peer that holds both versions of a fork SHOULD prove it to
// the space by writing sys.fork." A node that may write one does, once,
// whatever order the versions came in: one at a time either way, or both
// in one batch, and not again when it opens again.
func TestSpec_4_10APeerThatHoldsBothVersionsOfAForkProvesIt(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		order func(v1, w1 *record.Version) [][]*record.Version
	}{
		{"first then second", func(v1, w1 *record.Version) [][]*record.Version { return [][]*record.Version{{v1}, {w1}} }},
		{"second then first", func(v1, w1 *record.Version) [][]*record.Version { return [][]*record.Version{{w1}, {v1}} }},
		{"in one batch", func(v1, w1 *record.Version) [][]*record.Version { return [][]*record.Version{{w1, v1}} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ada := newNode(t, nil)
			g := ada.space("club", writerRoles)
			v1, w1 := forkedWriter(t, ada, g)
			for _, b := range tc.order(v1, w1) {
				if _, err := ada.Store().Admit(ctx, "peer", b); err != nil {
					t.Fatal(err)
				}
			}
			ps := waitProofs(t, ada, g.ID, 1)
			if len(ps) != 1 {
				t.Fatalf("%d proofs, want 1", len(ps))
			}
			p := ps[0]
			if st, _, _ := ada.Store().Standing(ctx, enginetest.Digest(p)); st != engine.Stands {
				t.Fatalf("the proof is %v", st)
			}
			for _, v := range []*record.Version{v1, w1} {
				if st, _, _ := ada.Store().Standing(ctx, enginetest.Digest(v)); st != engine.Withdrawn {
					t.Fatalf("a version of the proven fork is %v", st)
				}
			}
			again, err := ada.ProveForks(ctx, g.ID)
			if err != nil || len(again) != 0 {
				t.Fatalf("proving again wrote %d: %v", len(again), err)
			}
			ada.reopen(nil)
			time.Sleep(300 * time.Millisecond) // the loop looks at every space when it starts
			if ps := proofsIn(t, ada, g.ID); len(ps) != 1 {
				t.Fatalf("after opening again, %d proofs", len(ps))
			}
		})
	}
}

// Two nodes converge on one proof: the one that gets the versions from a
// node that proved the fork writes none of its own; two that found it
// apart and each proved it end holding the same proofs, with every version
// standing the same, and neither writes another.
func TestTwoNodesConvergeOnOneProof(t *testing.T) {
	ctx := context.Background()
	ada, ben := newNode(t, nil), newNode(t, nil)
	g := ada.space("club", writerRoles)
	join(t, ada, ben, g.ID, "writer")
	v1, w1 := forkedWriter(t, ada, g)
	syncAll(t, g.ID, ada, ben)
	if _, err := ada.Store().Admit(ctx, "peer", []*record.Version{v1, w1}); err != nil {
		t.Fatal(err)
	}
	if ps := waitProofs(t, ada, g.ID, 1); len(ps) != 1 {
		t.Fatalf("ada holds %d proofs", len(ps))
	}
	copyVersions(t, ada, ben, g.ID)
	time.Sleep(300 * time.Millisecond)
	if wrote, err := ben.ProveForks(ctx, g.ID); err != nil || len(wrote) != 0 {
		t.Fatalf("ben proved it again: %d %v", len(wrote), err)
	}
	if a, b := proofsIn(t, ada, g.ID), proofsIn(t, ben, g.ID); len(a) != 1 || len(b) != 1 || a[0].ID != b[0].ID {
		t.Fatalf("ada holds %d proofs, ben %d", len(a), len(b))
	}

	// Found apart: each proves it, and they converge.
	cy := newNode(t, nil)
	join(t, ada, cy, g.ID, "writer")
	syncAll(t, g.ID, ada, ben, cy)
	x1, y1 := forkedWriter(t, ada, g)
	syncAll(t, g.ID, ada, ben, cy)
	for _, tn := range []*testNode{ben, cy} {
		if _, err := tn.Store().Admit(ctx, "peer", []*record.Version{x1, y1}); err != nil {
			t.Fatal(err)
		}
		if ps := waitProofs(t, tn, g.ID, 2); len(ps) != 2 {
			t.Fatalf("%d proofs", len(ps))
		}
	}
	syncAll(t, g.ID, ada, ben, cy)
	time.Sleep(300 * time.Millisecond)
	want := standings(t, ada, g.ID)
	for _, tn := range []*testNode{ada, ben, cy} {
		if wrote, err := tn.ProveForks(ctx, g.ID); err != nil || len(wrote) != 0 {
			t.Fatalf("a node proved a proven fork again: %d %v", len(wrote), err)
		}
		got := standings(t, tn, g.ID)
		if len(got) != len(want) {
			t.Fatalf("%d versions, want %d", len(got), len(want))
		}
		for id, s := range want {
			if got[id] != s {
				t.Fatalf("%s is %s on one node, %s on another", id, got[id], s)
			}
		}
	}
	if ps := proofsIn(t, ada, g.ID); len(ps) != 3 {
		t.Fatalf("ada holds %d proofs, want the first and the two of the second fork", len(ps))
	}
	for _, v := range []*record.Version{x1, y1} {
		if want[v.ID] != engine.Withdrawn.String() {
			t.Fatalf("a version of the second fork is %s", want[v.ID])
		}
	}
}
