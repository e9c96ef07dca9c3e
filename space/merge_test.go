package space_test

import (
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// adminWorld: a founder, an admin role (every /space command and records)
// and a writer role, with alice and bob admins and carol a writer.
func adminWorld(t *testing.T) (w *world, founder, alice, bob, carol *actor, base []string) {
	founder, alice, bob, carol = newActor(t, "founder"), newActor(t, "alice"), newActor(t, "bob"), newActor(t, "carol")
	w = newWorld(t, []*actor{founder}, map[string][]space.Grant{
		"admin":  {space.MustGrant(space.CmdSpace), space.MustGrant("/record")},
		"writer": {space.MustGrant("/record")},
	})
	a := w.sign(founder, "sys.assign", memberKey(alice.did), assignBody(alice.did, "admin"), nil)
	w.add(a)
	b := w.sign(founder, "sys.assign", memberKey(bob.did), assignBody(bob.did, "admin"), ids(a))
	w.add(b)
	c := w.sign(founder, "sys.assign", memberKey(carol.did), assignBody(carol.did, "writer"), ids(b))
	w.add(c)
	return w, founder, alice, bob, carol, ids(c)
}

func removeBody(did string) *canonical.Object { return canonical.NewObject("member", did) }

// A removal beats a grant its author made concurrently (docs/spaces.md,
// The merge rule): Bob removes Alice while Alice adds Dave; Dave is not a
// member, whatever order the two are added in.
func TestMergeRemovalBeatsConcurrentGrant(t *testing.T) {
	for _, removalFirst := range []bool{true, false} {
		w, _, alice, bob, _, base := adminWorld(t)
		dave := newActor(t, "dave")
		r := w.sign(bob, "sys.remove", removeKey(alice.did), removeBody(alice.did), base)
		g := w.sign(alice, "sys.assign", memberKey(dave.did), assignBody(dave.did, "writer"), base)
		first, second := r, g
		if !removalFirst {
			first, second = g, r
		}
		w.add(first)
		w.add(second)
		now := w.h.Now()
		if now.IsMember(alice.did) || now.IsMember(dave.did) {
			t.Fatalf("removal first %v: alice %v, dave %v: want neither a member", removalFirst, now.IsMember(alice.did), now.IsMember(dave.did))
		}
		if _, counts, _ := w.h.Change(g.ID); counts {
			t.Fatal("the grant made concurrently with its author's removal does not count")
		}
		if _, counts, _ := w.h.Change(r.ID); !counts {
			t.Fatal("the removal counts")
		}
	}
}

// Two admins removing each other concurrently: both are out (least
// privilege); neither removal is undone by the other.
func TestMergeMutualRemovalBothOut(t *testing.T) {
	w, _, alice, bob, _, base := adminWorld(t)
	r1 := w.sign(bob, "sys.remove", removeKey(alice.did), removeBody(alice.did), base)
	r2 := w.sign(alice, "sys.remove", removeKey(bob.did), removeBody(bob.did), base)
	w.add(r1)
	res := w.add(r2)
	if !res.Counts {
		t.Fatal("a mutual removal counts")
	}
	now := w.h.Now()
	if now.IsMember(alice.did) || now.IsMember(bob.did) {
		t.Fatal("both are out")
	}
}

// A removed member backdating seen (docs/spaces.md; the adversarial list):
// Alice, removed by Bob, writes a removal of Carol as of before her own
// removal. It is concurrent with the removal that took her power, so it
// does not count: Carol stays.
func TestAttacksRemovedMemberBackdatingSeen(t *testing.T) {
	w, _, alice, bob, carol, base := adminWorld(t)
	r1 := w.sign(bob, "sys.remove", removeKey(alice.did), removeBody(alice.did), base)
	w.add(r1)
	late := w.sign(alice, "sys.remove", removeKey(carol.did), removeBody(carol.did), base)
	res := w.add(late)
	if res.Counts {
		t.Fatal("a backdated removal by a removed member counts")
	}
	if !w.h.Now().IsMember(carol.did) {
		t.Fatal("carol was removed by a removed member")
	}
	// Nor can she undo her removal through someone she backdates power to.
	mallory := newActor(t, "mallory")
	g := w.sign(alice, "sys.assign", memberKey(mallory.did), assignBody(mallory.did, "admin"), base)
	w.add(g)
	rb := w.sign(mallory, "sys.remove", removeKey(bob.did), removeBody(bob.did), ids(g))
	w.add(rb)
	now := w.h.Now()
	if now.IsMember(alice.did) || now.IsMember(mallory.did) || !now.IsMember(bob.did) {
		t.Fatalf("alice %v mallory %v bob %v: want only bob", now.IsMember(alice.did), now.IsMember(mallory.did), now.IsMember(bob.did))
	}
}

// Concurrent assignments merge to the roles all of them give, whatever
// their ids: grinding an id wins nothing (the adversarial list).
func TestAttacksGrindingIDsToWinAMerge(t *testing.T) {
	for _, lowFirst := range []bool{true, false} {
		w, _, alice, bob, carol, base := adminWorld(t)
		key := memberKey(carol.did)
		prev := w.atKey[key]
		one := w.sign(alice, "sys.assign", key, assignBody(carol.did, "writer", "admin"), base)
		// Bob grinds createdAt until his id sorts below Alice's.
		var two *record.Version
		for {
			w.atKey[key] = prev
			two = w.sign(bob, "sys.assign", key, assignBody(carol.did, "writer"), base)
			if two.ID < one.ID {
				break
			}
		}
		if lowFirst {
			w.add(two)
			w.add(one)
		} else {
			w.add(one)
			w.add(two)
		}
		if roles := w.h.Now().Roles(carol.did); len(roles) != 1 || roles[0] != "writer" {
			t.Fatalf("concurrent assignments give the roles both give, whatever the ids: %v", roles)
		}
	}
}

// A member granting itself more than it holds is refused (access/cover).
func TestAttacksGrantingItselfMore(t *testing.T) {
	founder, alice := newActor(t, "founder"), newActor(t, "alice")
	w := newWorld(t, []*actor{founder}, map[string][]space.Grant{
		"assigner": {space.MustGrant(space.CmdAssign), space.MustGrant("/record/write", []any{"==", ".collection", "app.notes"})},
		"admin":    {space.MustGrant("/")},
	})
	a := w.sign(founder, "sys.assign", memberKey(alice.did), assignBody(alice.did, "assigner"), nil)
	w.add(a)
	w.refused(w.sign(alice, "sys.assign", memberKey(alice.did), assignBody(alice.did, "assigner", "admin"), ids(a)), space.CodeAccessCover)
	// Nor a role with a grant she does not hold.
	w.refused(w.sign(alice, "sys.role", "role:mine", roleBody("mine", space.MustGrant("/record")), ids(a)), space.CodeAccessGrant)
}

// A revoke keeps what its writer had seen of the key (06 §2.9): per
// collection, places up to the cutoff; nothing in a collection not listed.
func TestRevokeKeepsWhatItsWriterSaw(t *testing.T) {
	w, _, alice, _, _, base := adminWorld(t)
	session := newActor(t, "session")
	rv := w.sign(alice, "sys.revoke", "revoke:"+record.OwnerPart(session.did),
		canonical.NewObject("key", session.did, "root", alice.did, "cutoffs", canonical.NewObject("app.chat", float64(4))), base)
	w.add(rv)
	now := w.h.Now()
	keep, ok := now.RevokedKeeps(session.did, alice.did)
	if !ok || keep["app.chat"] != 4 || len(keep) != 1 {
		t.Fatalf("keeps %v %v", keep, ok)
	}
	inv := func(coll string) *space.Request {
		return &space.Request{Root: alice.did, Author: session.did, Collection: coll}
	}
	for _, c := range []struct {
		coll string
		n    int64
		code string
	}{{"app.chat", 4, ""}, {"app.chat", 5, space.CodeStandingRevoked}, {"app.photos", 0, space.CodeStandingRevoked}} {
		r := inv(c.coll)
		r.Log = &record.Log{N: c.n}
		got := now.Judge(*r)
		if (got == nil) != (c.code == "") || got != nil && got.Code != c.code {
			t.Fatalf("%s at %d: %v, want %q", c.coll, c.n, got, c.code)
		}
	}
}
