package space_test

import (
	"testing"

	"github.com/minca-go/minca/space"
)

// 02 §6.3's example: Alice and Mallory are both granted /collection/define.
// Alice defines app.poll (d5) and changes it (d6); Mallory writes a
// definition of it naming a point before Alice's (d0). Both count, no one
// first defined app.poll, and d6 and d0 are both latest, so neither is in
// force, since they differ. A change that saw both, by anyone granted
// /collection/define for it, settles it. A rival Mallory backdates past
// that puts it out of force again until it is settled again. A delete as of
// before Alice's definition is refused: there was nothing to delete. A
// member whose role holds no grant for app.poll can't write a rival.
func TestSpec_6_3_AliceAndMallory(t *testing.T) {
	founder, alice, mallory, bob, carol := newActor(t, "founder"), newActor(t, "alice"), newActor(t, "mallory"), newActor(t, "bob"), newActor(t, "carol")
	w := newWorld(t, []*actor{founder}, map[string][]space.Grant{
		"definer": {space.MustGrant(space.CmdDefine), space.MustGrant("/record")},
		"writer":  {space.MustGrant("/record")},
	})
	aA := w.sign(founder, "sys.assign", memberKey(alice.did), assignBody(alice.did, "definer"), nil)
	w.add(aA)
	aM := w.sign(founder, "sys.assign", memberKey(mallory.did), assignBody(mallory.did, "definer"), ids(aA))
	w.add(aM)
	aB := w.sign(founder, "sys.assign", memberKey(bob.did), assignBody(bob.did, "definer"), ids(aM))
	w.add(aB)
	aC := w.sign(founder, "sys.assign", memberKey(carol.did), assignBody(carol.did, "writer"), ids(aB))
	w.add(aC)
	base := ids(aC)

	// A delete as of before Alice's definition: nothing to delete. (It is
	// refused whatever the key holds: what counts is what the delete saw.)
	d5 := w.sign(alice, "sys.collection", "collection:app.poll", definition("app.poll", 1), base)
	w.add(d5)
	if d := w.h.Now().Definition("app.poll"); d.InForce != d5.ID || d.Definer != alice.did || d.Contested {
		t.Fatalf("after d5: %+v", d)
	}
	del := w.sign(mallory, "sys.collection", "collection:app.poll", nil, base)
	w.refused(del, space.CodeAccessNothing)
	w.atKey["collection:app.poll"] = d5

	d6 := w.sign(alice, "sys.collection", "collection:app.poll", definition("app.poll", 2), ids(d5))
	w.add(d6)
	// Mallory's rival, as of before d5.
	delete(w.atKey, "collection:app.poll")
	d0 := w.sign(mallory, "sys.collection", "collection:app.poll", definition("app.poll", 7), base)
	res := w.add(d0)
	if !res.Counts {
		t.Fatal("Mallory's rival is hers to write: it counts")
	}
	now := w.h.Now()
	d := now.Definition("app.poll")
	if d.InForce != "" || !d.Contested || d.Definer != "" || len(d.Rivals) != 2 {
		t.Fatalf("d6 and d0 both latest: want contested with none in force, got %+v", d)
	}
	if _, refuses := now.InForce("app.poll"); !refuses {
		t.Fatal("a version in a contested collection with none in force is refused")
	}
	// Whatever the ids: the rival with the lower one does not win.
	for _, r := range d.Rivals {
		if r != d6.ID && r != d0.ID {
			t.Fatalf("rivals %v", d.Rivals)
		}
	}

	// Carol holds no grant for app.poll: she can't write a rival at all.
	delete(w.atKey, "collection:app.poll")
	w.refused(w.sign(carol, "sys.collection", "collection:app.poll", definition("app.poll", 3), base), space.CodeAccessGrant)

	// Bob, granted /collection/define, settles it by a change that saw both.
	w.atKey["collection:app.poll"] = d6
	s := w.sign(bob, "sys.collection", "collection:app.poll", definition("app.poll", 3), ids(d6, d0))
	w.add(s)
	d = w.h.Now().Definition("app.poll")
	if d.InForce != s.ID || d.Contested || d.Definer != "" {
		t.Fatalf("settled: in force %s, no definer; got %+v", s.ID, d)
	}
	if _, refuses := w.h.Now().InForce("app.poll"); refuses {
		t.Fatal("settled, it is in force")
	}
	// A version as of before the settling is still judged as of its seen.
	if at, err := w.h.At(ids(d6, d0)); err != nil {
		t.Fatal(err)
	} else if _, refuses := at.InForce("app.poll"); !refuses {
		t.Fatal("as of d6 and d0 the collection is contested")
	}

	// Mallory backdates another rival past the settling: out of force again.
	delete(w.atKey, "collection:app.poll")
	d0b := w.sign(mallory, "sys.collection", "collection:app.poll", definition("app.poll", 9), base)
	w.add(d0b)
	d = w.h.Now().Definition("app.poll")
	if d.InForce != "" || !d.Contested {
		t.Fatalf("a backdated rival puts it out of force again: %+v", d)
	}
	// And settled again.
	w.atKey["collection:app.poll"] = s
	s2 := w.sign(bob, "sys.collection", "collection:app.poll", definition("app.poll", 4), ids(s, d0b))
	w.add(s2)
	if d := w.h.Now().Definition("app.poll"); d.InForce != s2.ID || d.Contested {
		t.Fatalf("settled again: %+v", d)
	}

	// Alice's role taken: as first definer of app.mine, alone, she may still
	// change it; she can't write a rival of app.poll.
	m1 := w.sign(alice, "sys.collection", "collection:app.mine", definition("app.mine", 1), ids(s2))
	w.add(m1)
	take := w.sign(founder, "sys.assign", memberKey(alice.did), assignBody(alice.did, "writer"), ids(m1))
	w.add(take)
	m2 := w.sign(alice, "sys.collection", "collection:app.mine", definition("app.mine", 2), ids(take))
	w.add(m2)
	if d := w.h.Now().Definition("app.mine"); d.InForce != m2.ID || d.Definer != alice.did {
		t.Fatalf("the first definer changes it while it is hers alone: %+v", d)
	}
	w.atKey["collection:app.poll"] = s2
	w.refused(w.sign(alice, "sys.collection", "collection:app.poll", definition("app.poll", 5), ids(m2)), space.CodeAccessGrant)
}

// 02 §6.3: two members who define a collection apart with the same body
// leave it in force, but with no first definer, so from then on only those
// granted /collection/define for it may change it.
func TestSpec_6_3_SameBodyApart(t *testing.T) {
	founder, alice, bob := newActor(t, "founder"), newActor(t, "alice"), newActor(t, "bob")
	w := newWorld(t, []*actor{founder}, map[string][]space.Grant{"definer": {space.MustGrant(space.CmdDefine)}})
	aA := w.sign(founder, "sys.assign", memberKey(alice.did), assignBody(alice.did, "definer"), nil)
	w.add(aA)
	aB := w.sign(founder, "sys.assign", memberKey(bob.did), assignBody(bob.did, "definer"), ids(aA))
	w.add(aB)
	a := w.sign(alice, "sys.collection", "collection:app.list", definition("app.list", 1), ids(aB))
	w.add(a)
	delete(w.atKey, "collection:app.list")
	b := w.sign(bob, "sys.collection", "collection:app.list", definition("app.list", 1), ids(aB))
	w.add(b)
	d := w.h.Now().Definition("app.list")
	if d.InForce == "" || d.Def == nil || d.Definer != "" || !d.Contested {
		t.Fatalf("same body apart: in force, no definer: %+v", d)
	}
	if _, refuses := w.h.Now().InForce("app.list"); refuses {
		t.Fatal("rivals of one body leave it in force")
	}
	// Alice's define grant taken: she is not its definer, so she can't
	// change it.
	take := w.sign(founder, "sys.assign", memberKey(alice.did), assignBody(alice.did), ids(a, b))
	w.add(take)
	w.atKey["collection:app.list"] = a
	w.refused(w.sign(alice, "sys.collection", "collection:app.list", definition("app.list", 2), ids(take)), space.CodeAccessGrant)
}
