package node

import (
	"context"
	"slices"
	"testing"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// A second device refills the carry spaces 100 ms after the registry
// changes, and its event pump keeps the geneses of the spaces the registry
// lists as their sys.joined records arrive: on a slow disk the refill may
// run first. It still names the carrier a keeper of each listed space —
// the device lets the carrier sync a private space only once it does, and
// nothing refills it after the pump catches up.
func TestRefillKeepsTheListedGenesesFirst(t *testing.T) {
	ctx := context.Background()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	open := func() *Node {
		n, err := Open(ctx, &Options{Dir: t.TempDir(), Account: acc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	a := open()
	diary, err := a.CreateSpace(ctx, "diary", &CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	ck, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddCarrier(ctx, ck.DID(), "server"); err != nil {
		t.Fatal(err)
	}

	b := open()
	// The pump has not reached what arrives next.
	b.ev.sub.Close()
	<-b.ev.done
	var reg []*record.Version
	for v, err := range a.st.Export(ctx, a.Registry()) {
		if err != nil {
			t.Fatal(err)
		}
		reg = append(reg, v)
	}
	if _, err := b.st.Admit(ctx, "peer", reg); err != nil {
		t.Fatal(err)
	}
	if err := b.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	var keepers []space.Keeper
	if ok, err := b.judge.WithHistory(ctx, diary.ID, func(h *space.History) error {
		keepers = h.Now().Keepers()
		return nil
	}); err != nil || !ok {
		t.Fatalf("after the refill the second device holds no genesis of the diary the registry lists (%v)", err)
	}
	if !slices.ContainsFunc(keepers, func(k space.Keeper) bool { return k.DID == ck.DID() }) {
		t.Fatalf("the diary's keepers on the second device: %+v; want the carrier", keepers)
	}
}
