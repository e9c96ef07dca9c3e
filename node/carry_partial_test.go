package node_test

import (
	"context"
	"testing"

	"github.com/minca-go/minca/carry"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

// A device new to the account whose registry has arrived in part — the
// carrier's record, not yet the sys.joined of a private space — keeps the
// pass another device wrote for that space when it refills: the registry
// does not say the account left it. Deleted, the carrier would stop
// carrying the space, and the device, which has no key of it to write
// the pass again, would never get the space from the carrier.
func TestRefillKeepsAPassOfASpaceNotYetListed(t *testing.T) {
	ctx := context.Background()
	a := newNode(t, nil)
	album, err := a.CreateSpace(ctx, "album", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.AddCarrier(ctx, carrierDID(t), "server")
	if err != nil {
		t.Fatal(err)
	}
	pk := carry.PassKey(album.ID)
	if !livePasses(t, a.Node, r.Space)[pk] {
		t.Fatal("the first device wrote no pass for its private space")
	}
	b := &testNode{t: t, dir: t.TempDir(), account: a.account, clock: newClock()}
	b.open(nil)
	// The registry without its sys.joined records, as a first batch of a
	// sync may bring it; the carry space whole.
	var part []*record.Version
	for v, err := range a.Store().Export(ctx, a.Registry()) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Collection != node.JoinedCollection {
			part = append(part, v)
		}
	}
	if _, err := b.Store().Admit(ctx, "peer", part); err != nil {
		t.Fatal(err)
	}
	exchange(t, a.Node, b.Node, r.Space)
	if err := b.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	if !livePasses(t, b.Node, r.Space)[pk] {
		t.Fatal("the second device, whose registry does not list the album yet, deleted the album's pass")
	}
	// Once its registry shows the account left the album (its sys.joined
	// deleted), it deletes the pass.
	if _, err := a.Delete(ctx, a.Registry(), "space:"+album.ID); err != nil {
		t.Fatal(err)
	}
	exchange(t, a.Node, b.Node, a.Registry())
	if err := b.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	if livePasses(t, b.Node, r.Space)[pk] {
		t.Fatal("the second device keeps the pass of a space the registry shows the account left")
	}
}
