package connect_test

import (
	"errors"
	"testing"

	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/space"
)

// connect.test.ts: "a carrier and an app at one origin are two
// connections…" (06 §2.10, §4.3).
func TestConnect_ACarrierAndAnAppAtOneOriginAreTwoConnections(t *testing.T) {
	a := newAccount(t)
	origin := "https://ext.example"
	appKey := newApp(t, origin)
	a.grant(t, appKey.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), origin, spaceID("one"))
	carrier := newApp(t, origin)
	rc := carrier.request(t, connect.AccessCarry, connect.ScopeSpaces, nil)
	if err := a.home.Check(ctx, rc, origin); err != nil {
		t.Fatal(err)
	}
	rem, err := a.home.Remember(ctx, rc, origin, connect.Granted{})
	if err != nil || rem.Replaced != nil || len(rem.RemovedCarriers) != 0 {
		t.Fatalf("a carrier replaced %+v %v", rem, err)
	}
	conns, _ := a.home.Connections(ctx)
	if len(conns) != 2 {
		t.Fatalf("connections %+v", conns)
	}
	// An app connecting again replaces no carrier.
	a.grant(t, (&app{key: newKey(t), origin: origin}).request(t, connect.AccessRead, connect.ScopeSpaces, nil), origin)
	// One key is never both.
	wantCode(t, a.home.Check(ctx, (&app{key: carrier.key, origin: origin}).request(t, connect.AccessWrite, connect.ScopeSpaces, nil), origin), connect.CodeHomeOtherKind)
	// A new carrier from the origin replaces the earlier carrier only.
	carrier2 := newApp(t, origin)
	rem, err = a.home.Remember(ctx, carrier2.request(t, connect.AccessCarry, connect.ScopeSpaces, nil), origin, connect.Granted{})
	if err != nil || len(rem.RemovedCarriers) != 1 || rem.RemovedCarriers[0].Audience != carrier.key.DID() {
		t.Fatalf("%+v %v", rem, err)
	}
	// Disconnecting the app leaves the carrier; the carrier goes by its key.
	if _, err := a.home.DisconnectApp(ctx, origin); err != nil {
		t.Fatal(err)
	}
	conns, _ = a.home.Connections(ctx)
	if len(conns) != 1 || conns[0].Kind != connect.KindCarrier {
		t.Fatalf("after the app left: %+v", conns)
	}
	d, err := a.home.DisconnectKey(ctx, carrier2.key.DID())
	if err != nil || len(d.Revoke) != 0 || d.Connection.Kind != connect.KindCarrier {
		t.Fatalf("%+v %v", d, err)
	}
}

// connect.test.ts: "connecting a carrier to an account home" (06 §4.3): the
// carry grant reads, and a carrier checks that kind is carry, that the
// invite is to the named space, private, with the account its one founder
// and no roles, carrying its key, and that pod.dataPath has no empty or
// ".." segment.
func TestConnect_ConnectingACarrierToAnAccountHome(t *testing.T) {
	a := newAccount(t)
	carry := carrySpace(t, a.root.DID(), true, false)
	g := &connect.CarryGrant{DID: a.root.DID(), Name: "Leif", Space: carry.ID, Invite: "invite-to-carry",
		Pod: &connect.Pod{DataPath: "accounts/k3j2h4g5f6d7/stores", Folder: "Minca"}, Relays: []string{"wss://relay.example"}}
	read := func(inv connect.CarryInvite) connect.InviteReader {
		return func(string) (connect.CarryInvite, error) { return inv, nil }
	}
	good := connect.CarryInvite{Space: carry.ID, Genesis: carry, HasKey: true}
	back, err := connect.ParseCarryGrant(marshal(t, g.Value()))
	if err != nil {
		t.Fatal(err)
	}
	if err := connect.CheckCarryGrant(back, read(good)); err != nil {
		t.Fatal(err)
	}
	// The spec's example shape reads, pod null included.
	ex, err := connect.ParseCarryGrant([]byte(`{ "v": 1, "kind": "carry", "did": "", "name": "Leif", "carry": { "space": "", "invite": "" }, "pod": null, "relays": ["wss://…"] }`))
	if err != nil || ex.Pod != nil {
		t.Fatalf("%+v %v", ex, err)
	}
	o := g.Value()
	o.Set("kind", "note")
	_, err = connect.DecodeCarryGrant(o)
	wantCode(t, err, connect.CodeCarryKind)

	other := carrySpace(t, a.root.DID(), true, false)
	public := carrySpace(t, a.root.DID(), false, false)
	roles := carrySpace(t, a.root.DID(), true, true)
	notMine := carrySpace(t, newKey(t).DID(), true, false)
	for _, c := range []struct {
		name string
		inv  connect.CarryInvite
		code string
	}{
		{"another space", connect.CarryInvite{Space: other.ID, Genesis: other, HasKey: true}, connect.CodeCarryInvite},
		{"public", connect.CarryInvite{Space: carry.ID, Genesis: public, HasKey: true}, connect.CodeCarryInvite},
		{"no key", connect.CarryInvite{Space: carry.ID, Genesis: carry}, connect.CodeCarryInvite},
	} {
		wantCode(t, connect.CheckCarryGrant(g, read(c.inv)), c.code)
	}
	for _, sp := range []*space.Genesis{public, roles, notMine} {
		bad := &connect.CarryGrant{DID: a.root.DID(), Space: sp.ID}
		wantCode(t, connect.CheckCarryGrant(bad, read(connect.CarryInvite{Space: sp.ID, Genesis: sp, HasKey: true})), connect.CodeCarrySpace)
	}
	for _, p := range []string{"/accounts/x", "accounts//x", "accounts/../x", "", "a/.."} {
		bad := *g
		bad.Pod = &connect.Pod{DataPath: p, Folder: "Minca"}
		wantCode(t, connect.CheckCarryGrant(&bad, read(good)), connect.CodeCarryPod)
	}
	wantCode(t, connect.CheckCarryGrant(g, func(string) (connect.CarryInvite, error) { return connect.CarryInvite{}, errors.New("not an invite") }), connect.CodeCarryInvite)

	// At the home: a carrier's request is kept by its key, with no note
	// and nothing to revoke.
	c := newApp(t, "https://ext.example")
	rc := c.request(t, connect.AccessCarry, connect.ScopeSpaces, nil)
	if _, err := connect.IssueGrant(rc, connect.GrantOptions{Account: a.root}); err == nil {
		t.Fatal("a carrier was issued a note")
	}
	if err := a.home.Check(ctx, rc, c.origin); err != nil {
		t.Fatal(err)
	}
	rem, err := a.home.Remember(ctx, rc, c.origin, connect.Granted{})
	if err != nil || rem.Connection.Kind != connect.KindCarrier || rem.Connection.ExpiresAt != 0 {
		t.Fatalf("%+v %v", rem, err)
	}
}
