package node_test

import (
	"context"
	"errors"
	"github.com/minca-go/minca/carry"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// carrierDID is a new carrier's key.
func carrierDID(t testing.TB) string {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k.DID()
}

// exchange hands every version of each space src holds to dst, as sync
// would.
func exchange(t testing.TB, src, dst *node.Node, spaces ...string) {
	t.Helper()
	ctx := context.Background()
	for _, id := range spaces {
		var vs []*record.Version
		for v, err := range src.Store().Export(ctx, id) {
			if err != nil {
				t.Fatal(err)
			}
			vs = append(vs, v)
		}
		if len(vs) == 0 {
			continue
		}
		if _, err := dst.Store().Admit(ctx, "peer", vs); err != nil {
			t.Fatal(err)
		}
	}
}

// current is the current record at key, opened under k when it is sealed;
// nil when there is none or it is a delete.
func current(t testing.TB, n *node.Node, spaceID, key string, k *seal.Key) any {
	t.Helper()
	v, err := n.Store().Current(context.Background(), spaceID, key)
	if err != nil || v.Deleted {
		return nil
	}
	if k == nil {
		return v.Body
	}
	o, err := seal.OpenBody(k, spaceID, v.Collection, key, v.Body)
	if err != nil {
		t.Fatalf("%s in %s does not open: %v", key, spaceID, err)
	}
	return o.Body
}

// livePasses are the keys of the sys.pass records of a carry space that
// stand and are not deletes.
func livePasses(t testing.TB, n *node.Node, spaceID string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for v, err := range n.Store().Export(context.Background(), spaceID) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Collection != carry.PassCollection {
			continue
		}
		if cur, err := n.Store().Current(context.Background(), spaceID, v.Key); err == nil && !cur.Deleted {
			out[v.Key] = true
		}
	}
	return out
}

func carriersOf(t testing.TB, n *node.Node, did string) []carry.Carrier {
	t.Helper()
	cs, err := n.Carriers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []carry.Carrier
	for _, c := range cs {
		if c.DID == did {
			out = append(out, c)
		}
	}
	return out
}

// The named carrier tests of 06 §4.2 (carrier.test.ts).
func TestCarriers(t *testing.T) {
	ctx := context.Background()

	t.Run("added twice at once, it gets one carry space", func(t *testing.T) {
		a := newNode(t, nil)
		did := carrierDID(t)
		var wg sync.WaitGroup
		res := make([]*node.CarryAdded, 2)
		errs := make([]error, 2)
		for i := range res {
			wg.Go(func() { res[i], errs[i] = a.AddCarrier(ctx, did, "laptop") })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if res[0].Space != res[1].Space || res[0].New == res[1].New {
			t.Fatalf("two adds at once: %+v and %+v; want one carry space, added once", res[0], res[1])
		}
		cs := carriersOf(t, a.Node, did)
		if len(cs) != 1 || cs[0].Space != res[0].Space || !cs[0].Live() || cs[0].Gen != 0 {
			t.Fatalf("sys.carrier records: %+v", cs)
		}
		g, k, err := carry.DeriveSpace(a.account, did, 0)
		if err != nil || g.ID != res[0].Space {
			t.Fatalf("the carry space is not the one derived from the account key, did and gen 0: %v %v", g, err)
		}
		// The invite reads back to the carry space, with its key.
		ig, ik, err := carry.ParseViewInvite(res[0].Invite)
		if err != nil || ig.ID != g.ID || !ik.Equal(k) {
			t.Fatalf("the invite: %v %v", ig, err)
		}
		// Filled: the registry's pass is there, and reads as one.
		p := current(t, a.Node, g.ID, carry.PassKey(a.Registry()), k)
		if p == nil {
			t.Fatal("no pass for the account registry")
		}
		if pass, err := carry.ReadPass(carry.PassKey(a.Registry()), p); err != nil || pass.Genesis.ID != a.Registry() {
			t.Fatalf("the registry's pass: %v", err)
		}
	})

	t.Run("added on two devices at once, it gets one carry space…", func(t *testing.T) {
		a := newNode(t, nil)
		b := &testNode{t: t, dir: t.TempDir(), account: a.account, clock: newClock()}
		b.open(nil)
		did := carrierDID(t)
		ra, err := a.AddCarrier(ctx, did, "server")
		if err != nil {
			t.Fatal(err)
		}
		rb, err := b.AddCarrier(ctx, did, "server")
		if err != nil {
			t.Fatal(err)
		}
		if ra.Space != rb.Space || !ra.New || !rb.New {
			t.Fatalf("two devices, each before hearing of the other: %s and %s", ra.Space, rb.Space)
		}
		exchange(t, a.Node, b.Node, a.Registry(), ra.Space)
		exchange(t, b.Node, a.Node, b.Registry(), rb.Space)
		for _, n := range []*testNode{a, b} {
			cs := carriersOf(t, n.Node, did)
			if len(cs) != 1 || cs[0].Space != ra.Space || !cs[0].Live() {
				t.Fatalf("after hearing each other: %+v; want one record for one space", cs)
			}
			// Adding again on either returns it as it is.
			r, err := n.AddCarrier(ctx, did, "server")
			if err != nil || r.New || r.Space != ra.Space {
				t.Fatalf("adding it again: %+v %v", r, err)
			}
		}
	})

	t.Run("added again after it was removed…", func(t *testing.T) {
		a := newNode(t, nil)
		did := carrierDID(t)
		first, err := a.AddCarrier(ctx, did, "phone")
		if err != nil {
			t.Fatal(err)
		}
		if err := a.RemoveCarrier(ctx, did); err != nil {
			t.Fatal(err)
		}
		_, k0, _ := carry.DeriveSpace(a.account, did, 0)
		closed := current(t, a.Node, first.Space, carry.ClosedKey, k0)
		if b, _ := canonical.Marshal(closed); string(b) != `{"closed":true,"v":1}` {
			t.Fatalf("carry:closed: %s", b)
		}
		if ps := livePasses(t, a.Node, first.Space); len(ps) != 1 || !ps[carry.ClosedKey] {
			t.Fatalf("after removal the carry space holds %v; want carry:closed alone", ps)
		}
		again, err := a.AddCarrier(ctx, did, "phone")
		if err != nil {
			t.Fatal(err)
		}
		g1, _, _ := carry.DeriveSpace(a.account, did, 1)
		if !again.New || again.Gen != 1 || again.Space == first.Space || again.Space != g1.ID {
			t.Fatalf("added again: %+v; want gen 1, a new carry space %s", again, g1.ID)
		}
		cs := carriersOf(t, a.Node, did)
		if len(cs) != 2 {
			t.Fatalf("records: %+v", cs)
		}
		for _, c := range cs {
			if (c.Space == first.Space) != (c.Removed != "") {
				t.Fatalf("the first record is removed and the second live: %+v", cs)
			}
		}
		// The third add of a removed carrier is one gen past the highest.
		if err := a.RemoveCarrier(ctx, did); err != nil {
			t.Fatal(err)
		}
		third, err := a.AddCarrier(ctx, did, "phone")
		if err != nil || third.Gen != 2 {
			t.Fatalf("third: %+v %v", third, err)
		}
	})

	t.Run("its carry space cannot be left…", func(t *testing.T) {
		a := newNode(t, nil)
		did := carrierDID(t)
		r, err := a.AddCarrier(ctx, did, "server")
		if err != nil {
			t.Fatal(err)
		}
		err = a.Leave(ctx, r.Space)
		var we *node.WriteError
		if !errors.As(err, &we) || we.Code != node.CodeBadInput {
			t.Fatalf("leaving the carry space: %v", err)
		}
		// Nor is it listed as a space the account uses, even when a
		// sys.joined names it.
		if err := a.JoinGenesis(ctx, mustCarryGenesis(t, a.account, did, 0)); err != nil {
			t.Fatal(err)
		}
		spaces, err := a.Spaces(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range spaces {
			if s.ID == r.Space {
				t.Fatalf("the carry space is listed among the account's spaces: %+v", spaces)
			}
		}
		if ok, err := a.IsCarrySpace(ctx, r.Space); !ok || err != nil {
			t.Fatalf("IsCarrySpace: %v %v", ok, err)
		}
		if c, ok, err := a.CarrierOf(ctx, r.Space); c != did || !ok || err != nil {
			t.Fatalf("CarrierOf: %s %v %v", c, ok, err)
		}
		if _, ok, _ := a.CarrierOf(ctx, a.Registry()); ok {
			t.Fatal("the registry is no carry space")
		}
		// Removed, it is still a carry space: the key alone decides.
		if err := a.RemoveCarrier(ctx, did); err != nil {
			t.Fatal(err)
		}
		if err := a.Leave(ctx, r.Space); !errors.As(err, &we) {
			t.Fatalf("leaving a removed carrier's carry space: %v", err)
		}
		if c, ok, _ := a.CarrierOf(ctx, r.Space); c != did || !ok {
			t.Fatal("a removed carrier's carry space is no longer its")
		}
	})

	t.Run("adding one that fails leaves no carry space behind…", func(t *testing.T) {
		a := newNode(t, nil)
		did := carrierDID(t)
		g, _, _ := carry.DeriveSpace(a.account, did, 0)
		nothingBehind := func(n *node.Node) {
			t.Helper()
			if _, ok, err := judge.GenesisOf(ctx, n.Store(), g.ID); ok || err != nil {
				t.Fatalf("the carry space's genesis is kept after a failed add (%v)", err)
			}
			spaces, err := n.Store().Spaces(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range spaces {
				if s == g.ID {
					t.Fatal("the store holds versions of the carry space")
				}
			}
			if cs := carriersOf(t, n, did); len(cs) != 0 {
				t.Fatalf("a sys.carrier record is left: %+v", cs)
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := a.AddCarrier(cctx, did, "x"); !errors.Is(err, context.Canceled) {
			t.Fatalf("an add whose context ended: %v", err)
		}
		nothingBehind(a.Node)

		if _, err := a.AddCarrier(ctx, "did:key:nonsense", "x"); err == nil {
			t.Fatal("a carrier that is not a did:key was added")
		}
		nothingBehind(a.Node)

		// A node without the account key cannot add one, and writes nothing.
		dev := noAccountNode(t, a.account)
		var we *node.WriteError
		if _, err := dev.AddCarrier(ctx, did, "x"); !errors.As(err, &we) || we.Code != node.CodeNoAccountKey {
			t.Fatalf("a node without the account key: %v", err)
		}
		nothingBehind(dev)

		// A closed node adds nothing; opened again, the add works and
		// derives the same carry space.
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := a.AddCarrier(ctx, did, "x"); err == nil {
			t.Fatal("a closed node added a carrier")
		}
		a.open(nil)
		nothingBehind(a.Node)
		r, err := a.AddCarrier(ctx, did, "x")
		if err != nil || r.Space != g.ID || r.Gen != 0 {
			t.Fatalf("adding after the failures: %+v %v", r, err)
		}
	})

	t.Run("removed while a refill runs, no pass is written back", func(t *testing.T) {
		a := newNode(t, nil)
		did := carrierDID(t)
		r, err := a.AddCarrier(ctx, did, "server")
		if err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			a.space("s"+string(rune('a'+i%26))+string(rune('a'+i/26)), nil)
		}
		refilled := make(chan error, 1)
		go func() { refilled <- a.RefillCarriers(ctx) }()
		// Remove once the refill has written its first pass.
		deadline := time.Now().Add(time.Minute)
		for len(livePasses(t, a.Node, r.Space)) < 2 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if err := a.RemoveCarrier(ctx, did); err != nil {
			t.Fatal(err)
		}
		if err := <-refilled; err != nil {
			t.Fatal(err)
		}
		if ps := livePasses(t, a.Node, r.Space); len(ps) != 1 || !ps[carry.ClosedKey] {
			t.Fatalf("after the removal the carry space holds passes %v", ps)
		}
		// A later refill writes nothing there: the registry shows it removed.
		before := countVersions(t, a.Node, r.Space)
		a.space("later", nil)
		if err := a.RefillCarriers(ctx); err != nil {
			t.Fatal(err)
		}
		if after := countVersions(t, a.Node, r.Space); after != before {
			t.Fatalf("a refill after the removal wrote %d versions in its carry space", after-before)
		}
	})
}

// noAccountNode is a node of acc's account holding a note, not the key.
func noAccountNode(t testing.TB, acc *identity.PrivateKey) *node.Node {
	t.Helper()
	dir := t.TempDir()
	sk, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := identity.WriteKeyFile(filepath.Join(dir, "session.key"), sk); err != nil {
		t.Fatal(err)
	}
	note, err := identity.IssueNote(acc, identity.NoteOptions{Aud: sk.DID(), Sub: acc.DID(), Cmd: identity.CmdTop, Exp: time.Now().Add(time.Hour).Unix()})
	if err != nil {
		t.Fatal(err)
	}
	b, err := canonical.Marshal(note.Object())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "session.note"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(context.Background(), &node.Options{Dir: dir, Store: "memory:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func countVersions(t testing.TB, n *node.Node, spaceID string) int {
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

func mustCarryGenesis(t testing.TB, acc *identity.PrivateKey, did string, gen int64) *space.Genesis {
	t.Helper()
	g, _, err := carry.DeriveSpace(acc, did, gen)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// A carry space holds a pass per space the account uses (a private one's
// with the read seed of the key held now), the account's automations as
// wakes and the registry's links; the live carriers are named keepers
// (06 §4.2, §4.4).
func TestCarrySpaceContents(t *testing.T) {
	ctx := context.Background()
	k0 := seal.NewKey()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	priv, err := space.NewGenesis(space.GenesisOptions{Name: "diary", Private: true, Founders: []string{acc.DID()},
		CreatedAt: "2026-09-26T12:00:00.000Z", Nonce: "p1", EncryptionKeyID: k0.ID()})
	if err != nil {
		t.Fatal(err)
	}
	unkeyed, err := space.NewGenesis(space.GenesisOptions{Name: "other", Private: true, Founders: []string{acc.DID()},
		CreatedAt: "2026-09-26T12:00:00.000Z", Nonce: "p2", EncryptionKeyID: seal.NewKey().ID()})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := seal.NewKeyring(priv.ID, k0.ID())
	if err != nil {
		t.Fatal(err)
	}
	ring.Offer(k0)
	a := &testNode{t: t, dir: t.TempDir(), account: acc, clock: newClock()}
	a.open(&node.Options{PassKeys: rings{priv.ID: ring}})
	pub := a.space("club", nil)
	other := carrierDID(t)
	for _, g := range []*space.Genesis{priv, unkeyed} {
		if err := a.JoinGenesis(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	// Someone else keeps the club: that keeper stays.
	if _, err := a.WriteKeepers(ctx, pub.ID, []space.Keeper{{DID: other, Name: "backup"}}); err != nil {
		t.Fatal(err)
	}
	auto := canonical.NewObject("name", "New messages", "when", canonical.NewObject("query", canonical.NewObject("collection", "app.chat")),
		"spaces", []any{pub.ID}, "open", "https://chat.example/inbox")
	if err := a.PutRegistry(ctx, carry.AutomationCollection, "automation:a1", auto); err != nil {
		t.Fatal(err)
	}
	link := canonical.NewObject("blob", "x", "until", "2027-01-01T00:00:00.000Z")
	if err := a.PutRegistry(ctx, carry.LinkCollection, "link:l1", link); err != nil {
		t.Fatal(err)
	}
	did := carrierDID(t)
	r, err := a.AddCarrier(ctx, did, "server")
	if err != nil {
		t.Fatal(err)
	}
	_, ck, _ := carry.DeriveSpace(acc, did, 0)

	passes := livePasses(t, a.Node, r.Space)
	for _, id := range []string{a.Registry(), pub.ID, priv.ID} {
		if !passes[carry.PassKey(id)] {
			t.Fatalf("no pass for %s: %v", id, passes)
		}
	}
	if passes[carry.PassKey(unkeyed.ID)] {
		t.Fatal("a private space held without its key got a pass")
	}
	p, err := carry.ReadPass(carry.PassKey(priv.ID), current(t, a.Node, r.Space, carry.PassKey(priv.ID), ck))
	if err != nil {
		t.Fatal(err)
	}
	if p.Read == nil || *p.Read != k0.ReadSeed() || p.ReadKey != "" {
		t.Fatalf("the private space's pass: %+v", p)
	}
	rk, err := p.ReadKeyPair()
	if err != nil || rk.DID() != k0.ReadKeyDID() {
		t.Fatalf("the pass proves %v, not K₀'s read key (%v)", rk, err)
	}
	w, err := carry.ReadWake(current(t, a.Node, r.Space, carry.WakeKey("automation:a1"), ck))
	if err != nil || w.Collection != "app.chat" || !w.Others || w.Open != "https://chat.example/inbox" || len(w.Spaces) != 1 {
		t.Fatalf("the wake: %+v %v", w, err)
	}
	if b, _ := canonical.Marshal(current(t, a.Node, r.Space, "link:l1", ck)); string(b) != `{"blob":"x","until":"2027-01-01T00:00:00.000Z"}` {
		t.Fatalf("the link copied: %s", b)
	}
	keepers := func(id string) []space.Keeper {
		var ks []space.Keeper
		if _, err := a.Judge().WithHistory(ctx, id, func(h *space.History) error { ks = h.Now().Keepers(); return nil }); err != nil {
			t.Fatal(err)
		}
		return ks
	}
	if ks := keepers(pub.ID); len(ks) != 2 || !slices.Contains(ks, space.Keeper{DID: other, Name: "backup"}) || !slices.Contains(ks, space.Keeper{DID: did, Name: "server"}) {
		t.Fatalf("the club's keepers: %+v", ks)
	}
	if ks := keepers(a.Registry()); len(ks) != 1 || ks[0].DID != did {
		t.Fatalf("the registry's keepers: %+v", ks)
	}

	// The automation and the link go: so do the wake and the copy.
	if err := a.PutRegistry(ctx, carry.AutomationCollection, "automation:a1", nil); err != nil {
		t.Fatal(err)
	}
	if err := a.PutRegistry(ctx, carry.LinkCollection, "link:l1", nil); err != nil {
		t.Fatal(err)
	}
	if err := a.RefillCarriers(ctx); err != nil {
		t.Fatal(err)
	}
	if current(t, a.Node, r.Space, carry.WakeKey("automation:a1"), ck) != nil || current(t, a.Node, r.Space, "link:l1", ck) != nil {
		t.Fatal("a wake or link the registry no longer holds is still in the carry space")
	}
	// Removed, the carrier is no keeper; the other keeper stays.
	if err := a.RemoveCarrier(ctx, did); err != nil {
		t.Fatal(err)
	}
	if ks := keepers(pub.ID); len(ks) != 1 || ks[0].DID != other {
		t.Fatalf("after removal the club's keepers: %+v", ks)
	}
}

// A private space whose key is stale (a member was removed and the key
// has not changed yet) keeps its pass: it is still the key the space is
// read under, and the carrier still carries it.
func TestCarrierPassOfStaleKey(t *testing.T) {
	ctx := context.Background()
	k0 := seal.NewKey()
	acc, _ := identity.GenerateKey()
	ben, _ := identity.GenerateKey()
	priv, err := space.NewGenesis(space.GenesisOptions{Name: "diary", Private: true, Founders: []string{acc.DID()},
		Roles: map[string][]space.Grant{"writer": {space.MustGrant("/record")}}, CreatedAt: "2026-09-26T12:00:00.000Z", Nonce: "p1", EncryptionKeyID: k0.ID()})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := seal.NewKeyring(priv.ID, k0.ID())
	ring.Offer(k0)
	a := &testNode{t: t, dir: t.TempDir(), account: acc, clock: newClock()}
	a.open(&node.Options{PassKeys: rings{priv.ID: ring}})
	if err := a.JoinGenesis(ctx, priv); err != nil {
		t.Fatal(err)
	}
	// Ada assigns Ben and removes him, as any node would (signed here: the
	// node does not write in private spaces yet).
	sign := func(coll, key string, body *canonical.Object, n int64, prev string, seen []any) *record.Version {
		o := canonical.NewObject("space", priv.ID, "collection", coll, "key", key, "seq", 0.0, "createdAt", "2026-09-26T12:00:00.000Z",
			"retain", true, "body", body)
		lo := canonical.NewObject("n", float64(n))
		if prev != "" {
			lo.Set("prev", prev)
		}
		o.Set("log", lo)
		if seen != nil {
			o.Set("seen", seen)
		}
		v, err := record.Sign(o, acc)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	as := sign("sys.assign", "member:"+record.OwnerPart(ben.DID()), canonical.NewObject("member", ben.DID(), "roles", []any{"writer"}), 0, "", nil)
	rm := sign("sys.remove", "remove:"+record.OwnerPart(ben.DID()), canonical.NewObject("member", ben.DID()), 0, "", []any{as.ID})
	if _, err := a.Store().Admit(ctx, "x", []*record.Version{as, rm}); err != nil {
		t.Fatal(err)
	}
	did := carrierDID(t)
	r, err := a.AddCarrier(ctx, did, "server")
	if err != nil {
		t.Fatal(err)
	}
	_, ck, _ := carry.DeriveSpace(acc, did, 0)
	p, err := carry.ReadPass(carry.PassKey(priv.ID), current(t, a.Node, r.Space, carry.PassKey(priv.ID), ck))
	if err != nil || p.Read == nil || *p.Read != k0.ReadSeed() {
		t.Fatalf("the pass of a space whose K₀ is stale: %+v %v", p, err)
	}
}
