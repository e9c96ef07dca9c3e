package peers_test

import (
	"context"
	"slices"
	"testing"

	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/transport"
)

// A node serves its carry spaces (06 §4.2): NodeHost lists them, and lets
// the carrier read its own by key alone (no note), the account's devices
// by root, and neither another carrier nor a stranger; once the carrier is
// removed its carry space is still served to it, to hear carry:closed.
func TestNodeHostServesCarrySpaces(t *testing.T) {
	ctx := context.Background()
	n := newNode(t, nil)
	carrierKey, _ := identity.GenerateKey()
	otherKey, _ := identity.GenerateKey()
	added, err := n.AddCarrier(ctx, carrierKey.DID(), "server")
	if err != nil {
		t.Fatal(err)
	}
	h := peers.NodeHost(n.Node)
	ids, err := h.Spaces(ctx)
	if err != nil || !slices.Contains(ids, added.Space) || !slices.Contains(ids, n.Registry()) {
		t.Fatalf("Spaces %v (%v): want the carry space %s and the registry", ids, err, added.Space)
	}
	for _, c := range []struct {
		who  string
		peer transport.Peer
		want bool
	}{
		{"the carrier", transport.Peer{DID: carrierKey.DID()}, true},
		{"another carrier", transport.Peer{DID: otherKey.DID()}, false},
		{"a device of the account", transport.Peer{DID: otherKey.DID(), Root: n.Account()}, true},
		{"another account", transport.Peer{DID: otherKey.DID(), Root: otherKey.DID()}, false},
	} {
		if got, err := h.MayRead(ctx, added.Space, c.peer); err != nil || got != c.want {
			t.Errorf("%s reads the carry space: %v (%v), want %v", c.who, got, err, c.want)
		}
	}
	if err := n.RemoveCarrier(ctx, carrierKey.DID()); err != nil {
		t.Fatal(err)
	}
	ids, _ = h.Spaces(ctx)
	if got, err := h.MayRead(ctx, added.Space, transport.Peer{DID: carrierKey.DID()}); err != nil || !got || !slices.Contains(ids, added.Space) {
		t.Errorf("a removed carrier's carry space: served %v, read %v (%v)", slices.Contains(ids, added.Space), got, err)
	}
}
