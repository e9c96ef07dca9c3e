package node

import (
	"context"
	"github.com/minca-go/minca/carry"
	"path/filepath"
	"slices"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// A node directory from before the registry was private: its store holds
// the public registry, with the account's spaces, a carrier and a
// revocation. Opened again, the node copies them into the private registry
// once — sealed there — and follows them; what it deletes there since
// stays deleted.
func TestRegistryMigratesFromPublic(t *testing.T) {
	ctx := context.Background()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	open := func() *Node {
		t.Helper()
		n, err := Open(ctx, &Options{Dir: dir, Store: "pebble:" + filepath.Join(dir, "store"), Account: acc})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { n.Close() })
		return n
	}
	n := open()
	legacy, err := LegacyRegistryGenesis(acc.DID())
	if err != nil {
		t.Fatal(err)
	}
	if err := judge.AddGenesis(ctx, n.st, legacy); err != nil {
		t.Fatal(err)
	}
	// What an earlier minca wrote there, in the clear.
	var kept []*space.Genesis
	for _, name := range []string{"kept", "left before"} {
		g, err := space.NewGenesis(space.GenesisOptions{Name: name, Founders: []string{acc.DID()}, CreatedAt: "2026-03-01T00:00:00.000Z", Nonce: name})
		if err != nil {
			t.Fatal(err)
		}
		if err := judge.AddGenesis(ctx, n.st, g); err != nil {
			t.Fatal(err)
		}
		body := canonical.NewObject("space", g.ID, "name", g.Name, "genesis", g.Object())
		if _, err := n.w.do(ctx, &writeReq{space: legacy.ID, collection: JoinedCollection, key: joinedPrefix + g.ID, body: body, sys: true}); err != nil {
			t.Fatal(err)
		}
		kept = append(kept, g)
	}
	if err := n.deleteSys(ctx, legacy.ID, joinedPrefix+kept[1].ID); err != nil {
		t.Fatal(err)
	}
	ck, _ := identity.GenerateKey()
	csp, _, err := carry.DeriveSpace(acc, ck.DID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	c := carry.Carrier{DID: ck.DID(), Name: "home server", Since: "2026-03-02T00:00:00.000Z", Space: csp.ID}
	if _, err := n.w.do(ctx, &writeReq{space: legacy.ID, collection: carry.CarrierCollection, key: c.Key(), body: c.Value(), sys: true}); err != nil {
		t.Fatal(err)
	}
	gone, _ := identity.GenerateKey()
	if _, err := n.Revoke(ctx, legacy.ID, gone.DID(), acc.DID(), map[string]int64{"app.note": 3}); err != nil {
		t.Fatal(err)
	}
	// The earlier minca had not copied anything.
	if err := n.st.SetMeta(ctx, migratedMeta, nil); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}

	n = open()
	spaces, err := n.Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, s := range spaces {
		ids = append(ids, s.ID)
	}
	if !slices.Contains(ids, kept[0].ID) || slices.Contains(ids, kept[1].ID) || slices.Contains(ids, legacy.ID) {
		t.Fatalf("after the copy the node keeps %v; want %s, not %s nor the public registry", ids, kept[0].ID, kept[1].ID)
	}
	cs, err := n.Carriers(ctx)
	if err != nil || len(cs) != 1 || cs[0].DID != ck.DID() || cs[0].Space != csp.ID {
		t.Fatalf("carriers after the copy: %+v %v", cs, err)
	}
	rv, err := n.st.Current(ctx, n.Registry(), "revoke:"+record.OwnerPart(gone.DID()))
	if err != nil {
		t.Fatalf("the revocation was not copied: %v", err)
	}
	if o, _ := rv.Body.(*canonical.Object); o == nil {
		t.Fatal("the copied revocation has no body")
	} else if k, _ := o.Get("key"); k != gone.DID() {
		t.Fatalf("the copied revocation revokes %v", k)
	}
	for v, err := range n.st.Export(ctx, n.Registry()) {
		if err != nil {
			t.Fatal(err)
		}
		if (v.Collection == JoinedCollection || v.Collection == carry.CarrierCollection) && v.HasBody && !seal.IsSealed(v.Body) {
			t.Fatalf("%s %s is in the clear in the private registry", v.Collection, v.Key)
		}
	}
	if b, _, _ := n.st.Meta(ctx, migratedMeta); string(b) != legacy.ID {
		t.Fatalf("the copy is recorded as %q", b)
	}
	// Left since: not brought back from the public registry.
	if err := n.unkeep(ctx, kept[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	n = open()
	js, err := n.joined(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(js) != 0 {
		t.Fatalf("a space left after the copy is listed again: %+v", js)
	}
}
