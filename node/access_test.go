package node_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

var roles = map[string][]space.Grant{
	"writer": {space.MustGrant("/record")},
	"admin":  {space.MustGrant(space.CmdSpace), space.MustGrant(space.CmdDefine), space.MustGrant("/record")},
}

func members(t *testing.T, tn *testNode, sp string) map[string][]string {
	t.Helper()
	ms, err := tn.Members(context.Background(), sp)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, m := range ms {
		out[m.Root] = m.Roles
	}
	return out
}

// Create, invite, join, assign and take roles, remove, leave: each an
// access change in space's formats, judged like a peer's.
func TestAccessHistoryWrites(t *testing.T) {
	ctx := context.Background()
	alice, bob := newNode(t, nil), newNode(t, nil)
	g := alice.space("club", roles)
	inv, err := alice.Invite(ctx, g.ID, []string{"writer"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.JoinInvite(ctx, inv); err != nil {
		t.Fatal(err)
	}
	if r := members(t, bob, g.ID)[bob.Account()]; !slices.Equal(r, []string{"writer"}) {
		t.Fatalf("bob joined with roles %v, want [writer]", r)
	}
	note := put(t, bob, g.ID, "app.note", obj("by", "bob"), nil)
	// Alice takes bob's history in, as a peer would, and sees him.
	handOver(t, bob, alice, g.ID)
	if _, ok := members(t, alice, g.ID)[bob.Account()]; !ok {
		t.Fatal("alice does not see bob as a member")
	}
	// A new role, defined in the history, given to bob.
	if _, err := alice.DefineRole(ctx, g.ID, "poster", []space.Grant{space.MustGrant("/record/write", []any{"==", ".collection", "app.post"})}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.Assign(ctx, g.ID, bob.Account(), []string{"poster", "writer"}); err != nil {
		t.Fatal(err)
	}
	if r := members(t, alice, g.ID)[bob.Account()]; !slices.Equal(r, []string{"poster", "writer"}) {
		t.Fatalf("after assigning the new role bob has %v", r)
	}
	// Assign bob admin, then take it away again (fewer roles).
	if _, err := alice.Assign(ctx, g.ID, bob.Account(), []string{"admin", "writer"}); err != nil {
		t.Fatal(err)
	}
	if r := members(t, alice, g.ID)[bob.Account()]; !slices.Equal(r, []string{"admin", "writer"}) {
		t.Fatalf("after the assign bob has %v", r)
	}
	if _, err := alice.Assign(ctx, g.ID, bob.Account(), []string{"writer"}); err != nil {
		t.Fatal(err)
	}
	if r := members(t, alice, g.ID)[bob.Account()]; !slices.Equal(r, []string{"writer"}) {
		t.Fatalf("after taking admin bob has %v", r)
	}
	// Remove bob: what he wrote after the removal, not seen by it, is
	// withdrawn; what he wrote before stays.
	if _, err := alice.Remove(ctx, g.ID, bob.Account()); err != nil {
		t.Fatal(err)
	}
	if _, ok := members(t, alice, g.ID)[bob.Account()]; ok {
		t.Fatal("bob is still a member after the removal")
	}
	if v, _, err := alice.Store().Standing(ctx, enginetest.Digest(note)); err != nil || v != engine.Stands {
		t.Fatalf("bob's note from before the removal: %v %v", v, err)
	}
	// A founder cannot leave without stepping down; bob's node leaves.
	var we *node.WriteError
	if err := alice.Leave(ctx, g.ID); !errors.As(err, &we) || we.Code != space.CodeAccessFounder {
		t.Fatalf("a founder leaving: %v", err)
	}
	g2 := alice.space("second", roles)
	inv2, _ := alice.Invite(ctx, g2.ID, []string{"writer"})
	if _, err := bob.JoinInvite(ctx, inv2); err != nil {
		t.Fatal(err)
	}
	if err := bob.Leave(ctx, g2.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := members(t, bob, g2.ID)[bob.Account()]; ok {
		t.Fatal("bob is a member after leaving")
	}
	sps, _ := bob.Spaces(ctx)
	for _, s := range sps {
		if s.ID == g2.ID {
			t.Fatal("a space left is still in the node's list")
		}
	}
}

// sync hands every version of a space from one node to the other, as a
// peer's sync would.
func handOver(t *testing.T, from, to *testNode, sp string) {
	t.Helper()
	var vs []*record.Version
	for v, err := range from.Store().Export(context.Background(), sp) {
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if _, err := to.Store().Admit(context.Background(), "peer", vs); err != nil {
		t.Fatal(err)
	}
}

// 06 §1.3: with the account key, the registry holds a sys.joined record
// per space, keyed space:<id>, rooted in the account, and a second device
// of the account follows it.
func TestTheAccountRegistry(t *testing.T) {
	ctx := context.Background()
	a := newNode(t, nil)
	g := a.space("listed", nil)
	reg := a.Registry()
	if reg == "" {
		t.Fatal("a node with the account key keeps no registry")
	}
	v, err := a.Store().Current(ctx, reg, "space:"+g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Collection != node.JoinedCollection || v.Proof == nil {
		t.Fatalf("the registry's record: %s in %s", v.Key, v.Collection)
	}
	// Another device of the same account: a fresh node directory, the
	// same account key; it receives the registry and follows it.
	b := &testNode{t: t, dir: t.TempDir(), account: a.account, clock: a.clock}
	b.open(nil)
	if b.Registry() != reg {
		t.Fatalf("two devices of one account derive registries %s and %s", reg, b.Registry())
	}
	// It follows while it runs: the registry's record arrives, the node
	// keeps the space's genesis.
	handOver(t, a, b, reg)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok, _ := judge.GenesisOf(ctx, b.Store(), g.ID); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second device did not keep the genesis the registry lists")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sps, err := b.Spaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sps, func(s node.SpaceInfo) bool { return s.ID == g.ID && s.Name == "listed" }) {
		t.Fatalf("the second device keeps %v, want the space the first created", sps)
	}
	// Only the account's own versions under /account/write count: a
	// sys.joined by another account is refused.
	o := newNode(t, nil)
	if err := o.JoinGenesis(ctx, mustGenesis(t, a, reg)); err != nil {
		t.Fatal(err)
	}
	if _, err := o.Put(ctx, reg, "app.x", obj(), nil); err == nil {
		t.Fatal("another account wrote in the account registry")
	}
}

func mustGenesis(t *testing.T, tn *testNode, id string) *space.Genesis {
	g, ok, err := judge.GenesisOf(context.Background(), tn.Store(), id)
	if err != nil || !ok {
		t.Fatalf("genesis of %s: %v %v", id, ok, err)
	}
	return g
}

// Definitions and revokes; signing out revokes the session key with a
// cutoff at what it wrote, then forgets it (06 §1.2).
func TestSigningOut(t *testing.T) {
	ctx := context.Background()
	tn := newNode(t, nil)
	g := tn.space("out", nil)
	define(t, tn, g.ID, "app.note")
	a := put(t, tn, g.ID, "app.note", obj("n", 1.0), nil)
	session, _, _ := tn.Session()
	if err := tn.SignOut(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := tn.Put(ctx, g.ID, "app.note", obj(), nil); !errors.Is(err, node.ErrSignedOut) {
		t.Fatalf("a write after signing out: %v", err)
	}
	rv, err := tn.Store().Current(ctx, g.ID, "revoke:"+record.OwnerPart(session))
	if err != nil {
		t.Fatal(err)
	}
	if rv.Author != session {
		t.Fatalf("the revoke is signed by %s, want the session key itself", rv.Author)
	}
	var ok bool
	tn.Judge().WithHistory(ctx, g.ID, func(h *space.History) error {
		for _, r := range h.Now().Revoked() {
			if r.Key == session && r.Cutoffs["app.note"] == 0 {
				ok = true
			}
		}
		return nil
	})
	if !ok {
		t.Fatal("the space's state holds no revoke of the session key with its cutoff")
	}
	if v, _, _ := tn.Store().Standing(ctx, enginetest.Digest(a)); v != engine.Stands {
		t.Fatalf("what the key wrote before signing out is %v", v)
	}
	if _, err := tn.Store().Current(ctx, tn.Registry(), "revoke:"+record.OwnerPart(session)); err != nil {
		t.Fatalf("no revoke in the account registry: %v", err)
	}
	// The key is forgotten: the node makes a new one when opened again.
	tn.reopen(nil)
	s2, _, err := tn.Session()
	if err != nil || s2 == session {
		t.Fatalf("after signing out the session key is %s (%v)", s2, err)
	}
	b := put(t, tn, g.ID, "app.note", obj("n", 2.0), nil)
	if b.Author != s2 || b.Log.N != 0 {
		t.Fatalf("the new session writes as %s at %d", b.Author, b.Log.N)
	}
}

// An invite to a space the account is in already, with the roles it
// gives, writes no join: the account's other node (or a program it
// connected, whose records-only note may not write sys.assign) just keeps
// the space. One with a role the account lacks writes the join.
func TestJoinInviteOfAnAccountAlreadyIn(t *testing.T) {
	ctx := context.Background()
	alice, bob := newNode(t, nil), newNode(t, nil)
	g := alice.space("club", roles)
	inv, err := alice.Invite(ctx, g.ID, []string{"writer"})
	if err != nil {
		t.Fatal(err)
	}
	countAssigns := func() int {
		n := 0
		for v, err := range alice.Store().Export(ctx, g.ID) {
			if err != nil {
				t.Fatal(err)
			}
			if v.Collection == space.KindAssign.Collection() {
				n++
			}
		}
		return n
	}
	before := countAssigns()
	if _, err := alice.JoinInvite(ctx, inv); err != nil {
		t.Fatalf("the founder joining by an invite: %v", err)
	}
	if n := countAssigns(); n != before {
		t.Fatalf("the founder's join wrote %d assigns", n-before)
	}
	// Bob joins as writer; an invite to writer again writes nothing, one
	// to admin writes his join with it.
	if _, err := bob.JoinInvite(ctx, inv); err != nil {
		t.Fatal(err)
	}
	handOver(t, bob, alice, g.ID)
	before = countAssigns()
	again, _ := alice.Invite(ctx, g.ID, []string{"writer"})
	handOver(t, alice, bob, g.ID)
	if _, err := bob.JoinInvite(ctx, again); err != nil {
		t.Fatal(err)
	}
	handOver(t, bob, alice, g.ID)
	if n := countAssigns(); n != before {
		t.Fatalf("a writer joining as writer again wrote %d assigns", n-before)
	}
	admin, _ := alice.Invite(ctx, g.ID, []string{"admin", "writer"})
	if _, err := bob.JoinInvite(ctx, admin); err != nil {
		t.Fatal(err)
	}
	if r := members(t, bob, g.ID)[bob.Account()]; !slices.Equal(r, []string{"admin", "writer"}) {
		t.Fatalf("bob joined by the admin invite with %v", r)
	}
}
