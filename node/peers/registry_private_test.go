package peers_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/node/peers"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
	"github.com/minca-go/minca/transport"
	"github.com/minca-go/minca/transport/transporttest"
)

// newDevice is a node of the account acc, with its peers.
func newDevice(t *testing.T, acc *identity.PrivateKey) *tnode {
	t.Helper()
	dir := t.TempDir()
	n, err := node.Open(context.Background(), &node.Options{Dir: dir, Store: "pebble:" + dir + "/store", Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	p, err := peers.New(peers.NodeHost(n), &peers.Options{Transport: &transport.Options{Self: peers.NodeSelf(n)},
		Reopen: 50 * time.Millisecond, Rescan: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return &tnode{Node: n, t: t, peers: p, topt: p.TransportOptions()}
}

// The account registry lists the account's private spaces and carriers:
// a stranger who knows the account from its node's who note gets nothing
// of it — not by the id earlier mincas derived from the account's DID,
// not by the registry's id, not the private space — answered as a space
// never heard of; nothing of it is in the clear in the store. The
// account's other device syncs it and follows the private space; the
// carrier, a keeper, reads it.
func TestRegistryPrivateFromStrangers(t *testing.T) {
	ctx := context.Background()
	acc := transporttest.NewKey(t)
	b := newDevice(t, acc)
	diary, err := b.CreateSpace(ctx, "secret diary", &node.CreateOptions{Private: true})
	if err != nil {
		t.Fatal(err)
	}
	ck := transporttest.NewKey(t)
	if _, err := b.AddCarrier(ctx, ck.DID(), "home server"); err != nil {
		t.Fatal(err)
	}
	// What a stranger computes from the who note alone: the account's
	// DID, and from it the registry as earlier mincas derived it.
	derived, err := space.NewGenesis(space.GenesisOptions{Name: "account", Founders: []string{b.Account()},
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: "minca/account-registry/v1", Account: true})
	if err != nil {
		t.Fatal(err)
	}
	if b.Registry() == derived.ID {
		t.Error("the registry's id is derived from the account's DID alone")
	}
	// And b holds that one too, as a store of an earlier minca would: an
	// account's own space, read by no stranger, public or not.
	if b.Registry() != derived.ID {
		if err := judge.AddGenesis(ctx, b.Store(), derived); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Put(ctx, derived.ID, "app.mark", map[string]any{"text": "from before"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	h := newHostile(t, b, nil)
	for i, id := range []string{derived.ID, b.Registry(), diary.ID} {
		sid := uint64(i + 1)
		if err := h.send(negOpen(t, sid, id, nil)); err != nil {
			t.Fatal(err)
		}
		if code, msg := h.negErr(sid); code != peers.CodeNotHeld || msg != "the space is not held here" {
			t.Errorf("a stranger opening %s: %s %q", id, code, msg)
		}
	}
	// Its records are sealed: the space's name and the carrier's are in
	// none but the keepers the registry names, which every peer that may
	// read it judges by (docs/private-spaces.md §4).
	for v, err := range b.Store().Export(ctx, b.Registry()) {
		if err != nil {
			t.Fatal(err)
		}
		if !space.IsAccessCollection(v.Collection) && v.HasBody && !seal.IsSealed(v.Body) {
			t.Errorf("%s %s is in the clear", v.Collection, v.Key)
		}
		raw, _ := canonical.Marshal(v.Object())
		if strings.Contains(string(raw), "secret diary") {
			t.Errorf("the registry holds the private space's name in the clear: %s", raw)
		}
	}
	// The account's devices still read the public one, as earlier mincas
	// do; strangers, above, do not.
	if ok, err := peers.NodeHost(b.Node).MayRead(ctx, derived.ID, transport.Peer{DID: "did:key:zDnaeDevice", Root: b.Account()}); err != nil || !ok {
		t.Errorf("the account's device may not read its public registry: %v", err)
	}
	// The carrier the account named keeper reads the registry.
	carrier := newHostile(t, b, transport.Carrier(ck))
	carrier.send(negOpen(t, 1, b.Registry(), nil))
	carrier.until(tNegMsg, 1)
	// The account's other device syncs the registry and follows what it
	// lists.
	c := newDevice(t, acc)
	if c.Registry() != b.Registry() {
		t.Fatalf("two devices of one account derive registries %s and %s", b.Registry(), c.Registry())
	}
	cc, cb, _ := pair(t, c, b, nil)
	go b.peers.Serve(ctx, cb, false, "accept")
	if _, err := c.peers.Sync(ctx, cc, []string{c.Registry()}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the other device follows the private space", func() bool {
		ss, err := c.Spaces(ctx)
		return err == nil && slices.ContainsFunc(ss, func(s node.SpaceInfo) bool { return s.ID == diary.ID })
	})
	if cs, err := c.Carriers(ctx); err != nil || len(cs) != 1 || cs[0].Name != "home server" {
		t.Fatalf("the other device's carriers: %+v %v", cs, err)
	}
}
