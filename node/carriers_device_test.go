package node_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/carry"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
)

// A device new to the account refills the carry spaces before it holds
// a private space's key (the registry and the carry space come before
// the space itself): the pass another device wrote for that space is the
// account's and stays. Deleted, the carrier would stop carrying the space,
// and the new device, which gets the key from what the carrier carries,
// would never get it — after a restart neither.
func TestCarrierPassKeptByADeviceWithoutTheKey(t *testing.T) {
	ctx := context.Background()
	a := newNode(t, nil)
	diary, err := a.CreateSpace(ctx, "diary", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, diary.ID, "app.entry", obj("text", "Dear diary"), nil); err != nil {
		t.Fatal(err)
	}
	did := carrierDID(t)
	r, err := a.AddCarrier(ctx, did, "server")
	if err != nil {
		t.Fatal(err)
	}
	_, ck, err := carry.DeriveSpace(a.account, did, 0)
	if err != nil {
		t.Fatal(err)
	}
	pk := carry.PassKey(diary.ID)
	aPass := current(t, a.Node, r.Space, pk, ck)
	if aPass == nil {
		t.Fatal("the first device wrote no pass for its private space")
	}

	// The second device: the registry and the carry space, not the diary.
	b := &testNode{t: t, dir: t.TempDir(), account: a.account, clock: newClock()}
	b.open(nil)
	exchange(t, a.Node, b.Node, a.Registry(), r.Space)
	if err := b.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := judge.GenesisOf(ctx, b.Store(), diary.ID); err != nil || !ok {
		t.Fatalf("the second device does not keep the diary's genesis the registry lists: %v", err)
	}
	if _, err := b.Open(ctx, sealedEntry(t, a.Node, diary.ID)); err == nil {
		t.Fatal("the second device opens the diary before it got the key: the test does not test what it says")
	}
	if !livePasses(t, b.Node, r.Space)[pk] {
		t.Fatal("the second device, without the diary's key, deleted the pass the first device wrote for it")
	}
	// The diary arrives; with its key the second device writes the same
	// pass, which is nothing to write.
	exchange(t, a.Node, b.Node, diary.ID)
	if _, err := b.Open(ctx, sealedEntry(t, a.Node, diary.ID)); err != nil {
		t.Fatalf("the second device does not open the diary once it arrived: %v", err)
	}
	before := versionsIn(t, b.Node, r.Space)
	if err := b.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	if after := versionsIn(t, b.Node, r.Space); after != before {
		t.Fatalf("with the key, the second device wrote %d versions in the carry space; want none", after-before)
	}
	if !sameBody(current(t, b.Node, r.Space, pk, ck), aPass) {
		t.Fatal("the diary's pass changed")
	}
}

// sealedEntry is the first app.entry version n holds in a space.
func sealedEntry(t testing.TB, n *node.Node, spaceID string) *record.Version {
	t.Helper()
	for v, err := range n.Store().Export(context.Background(), spaceID) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Collection == "app.entry" {
			return v
		}
	}
	t.Fatalf("no app.entry in %s", spaceID)
	return nil
}

// versionsIn counts the versions n holds in a space.
func versionsIn(t testing.TB, n *node.Node, spaceID string) int {
	t.Helper()
	c := 0
	for _, err := range n.Store().Export(context.Background(), spaceID) {
		if err != nil {
			t.Fatal(err)
		}
		c++
	}
	return c
}

func sameBody(a, b any) bool {
	x, err1 := canonical.Marshal(a)
	y, err2 := canonical.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// A device that adds a carrier before it holds a private space's key
// writes no pass for that space. When the key arrives later (K₀'s box, by
// sync) the running node takes it by itself: its index reads the space's
// bodies opened without a reader asking first, and it refills the carry
// space, so the carrier carries the space — without a restart or a
// change to the registry.
func TestRefillWhenADeviceTakesAKey(t *testing.T) {
	ctx := context.Background()
	a := newNode(t, nil)
	diary, err := a.CreateSpace(ctx, "diary", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, diary.ID, "app.entry", obj("text", "Dear diary"), nil); err != nil {
		t.Fatal(err)
	}
	b := &testNode{t: t, dir: t.TempDir(), account: a.account, clock: newClock()}
	b.open(nil)
	exchange(t, a.Node, b.Node, a.Registry())
	r, err := b.AddCarrier(ctx, carrierDID(t), "server")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	pk := carry.PassKey(diary.ID)
	if livePasses(t, b.Node, r.Space)[pk] {
		t.Fatal("the second device wrote a pass for the diary before it held its key: the test does not test what it says")
	}
	exchange(t, a.Node, b.Node, diary.ID) // the diary and the box of its key
	q := json.RawMessage(`{"collection":"app.entry","where":{"text":"Dear diary"}}`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		page, err := b.Query(ctx, diary.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		indexed, passed := len(page.Entries) == 1, livePasses(t, b.Node, r.Space)[pk]
		if indexed && passed {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the diary's key arrived at the second device: its index finds the entry opened %v, its carry space has the diary's pass %v", indexed, passed)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
