package judge_test

import (
	"testing"

	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

var writerRoles = map[string][]space.Grant{
	"writer": {space.MustGrant("/record")},
	"admin":  {space.MustGrant(space.CmdSpace), space.MustGrant(space.CmdDefine), space.MustGrant("/record")},
}

// space-access.test.ts, "a removed member cannot write": after a removal
// it has seen, a member's version is refused; one that had not seen it is
// stored withdrawn, whichever arrives first; what the removal kept stands.
func TestSpaceAccessRemovedMemberCannotWrite(t *testing.T) {
	founder, alice, bob := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "bob", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a1 := s.assign(founder, alice, nil, "writer")
	b1 := s.assign(founder, bob, ids(a1), "writer")
	r1 := s.note(alice, "app.notes", obj("text", "before"), ids(b1))
	k1 := s.note(bob, "app.notes", obj("text", "kept"), ids(b1))
	k2 := s.note(bob, "app.notes", obj("text", "not kept"), ids(b1))
	late := s.note(alice, "app.notes", obj("text", "backdated"), ids(b1))
	rm := s.remove(founder, alice, ids(b1))
	rmBob := s.write(founder, "sys.remove", "remove:"+record.OwnerPart(bob.did),
		obj("member", bob.did, "keep", obj(bob.signer.DID(), obj("app.notes", float64(k1.Log.N)))), ids(rm))
	after := s.note(alice, "app.notes", obj("text", "after"), ids(rm))

	for _, lateFirst := range []bool{false, true} {
		p := newPeer(t, s.g)
		p.expect(a1, engine.Stands, "")
		p.expect(b1, engine.Stands, "")
		p.expect(r1, engine.Stands, "")
		p.expect(k1, engine.Stands, "")
		p.expect(k2, engine.Stands, "")
		if lateFirst {
			p.expect(late, engine.Stands, "")
			p.expect(rm, engine.Stands, "")
		} else {
			p.expect(rm, engine.Stands, "")
			p.expect(late, engine.Withdrawn, space.CodeWithdrawnMember)
		}
		p.expect(after, engine.Refused, space.CodeStandingMember)
		for _, v := range []*record.Version{r1, late} {
			if got := p.standing(v.ID); got != engine.Withdrawn {
				t.Fatalf("late first %v: alice's %s is %v, want withdrawn: a removal takes away what it did not keep", lateFirst, v.ID, got)
			}
			if cur := p.current(s.g.ID, v.Key); cur != "" {
				t.Fatalf("a withdrawn version reads as %s", cur)
			}
		}
		p.expect(rmBob, engine.Stands, "")
		if p.standing(k1.ID) != engine.Stands || p.standing(k2.ID) != engine.Withdrawn {
			t.Fatalf("bob's removal kept k1 and not k2: %v %v", p.standing(k1.ID), p.standing(k2.ID))
		}
		if probs, err := p.st.Check(ctx, nil); err != nil || len(probs) > 0 {
			t.Fatalf("check: %v %v", probs, err)
		}
	}
}

// 06 §2.9: a revoke keeps only what its writer had seen of the key — per
// collection, the places up to its cutoff. What the key wrote past it is
// withdrawn; in a collection the revoke does not list, all of it; a version
// that saw the revoke is refused.
func Test06_2_9RevokeWithdrawsOnlyUnseen(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a1 := s.assign(founder, alice, nil, "writer")
	var chat []*record.Version
	for i := 0; i < 4; i++ {
		chat = append(chat, s.note(alice, "app.chat", obj("n", float64(i)), ids(a1)))
	}
	photo := s.note(alice, "app.photos", obj("n", float64(0)), ids(a1))
	key := alice.signer.DID()
	home := newAccount(t, "home", false) // the account itself, signing the revoke
	home.root, home.did, home.signer = alice.root, alice.did, alice.root
	rv := s.write(home, "sys.revoke", "revoke:"+record.OwnerPart(key),
		obj("key", key, "root", alice.did, "cutoffs", obj("app.chat", float64(1))), ids(a1))
	after := s.note(alice, "app.chat", obj("n", float64(9)), ids(rv))

	p := newPeer(t, s.g)
	p.admit(a1)
	p.admit(chat...)
	p.admit(photo)
	p.expect(rv, engine.Stands, "")
	for i, v := range chat {
		want := engine.Stands
		if i > 1 {
			want = engine.Withdrawn
		}
		if got := p.standing(v.ID); got != want {
			t.Fatalf("chat %d: %v, want %v", i, got, want)
		}
	}
	if got := p.standing(photo.ID); got != engine.Withdrawn {
		t.Fatalf("a collection the revoke does not list keeps nothing: %v", got)
	}
	p.expect(after, engine.Refused, space.CodeStandingRevoked)
	// Another peer, the revoke first: the same.
	q := newPeer(t, s.g)
	q.admit(a1, rv)
	q.admit(chat...)
	if q.standing(chat[1].ID) != engine.Stands || q.standing(chat[2].ID) != engine.Withdrawn {
		t.Fatal("the revoke arriving first gives the same standing")
	}
}

// rules.test.ts, "a forged edit is refused by every peer": an edit that
// changes a fixed field is refused whatever order a peer receives it in.
func TestRulesForgedEditRefusedByEveryPeer(t *testing.T) {
	founder, alice, mallory := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "mallory", true)
	s := newScene(t, []*account{founder}, map[string][]space.Grant{"writer": {space.MustGrant("/record")}})
	d := s.define(founder, def("app.poll", "rules", obj("fixed", []any{"options"})), nil)
	a1 := s.assign(founder, alice, ids(d), "writer")
	m1 := s.assign(founder, mallory, ids(a1), "writer")
	poll := s.note(alice, "app.poll", obj("q", "lunch?", "options", []any{"pizza", "soup"}), ids(m1), retained)
	forged := s.write(mallory, "app.poll", poll.Key, obj("q", "lunch?", "options", []any{"pizza", "soup", "mallory's"}), ids(m1))
	all := []*record.Version{d, a1, m1, poll, forged}
	for i, order := range [][]int{{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {4, 0, 1, 2, 3}, {3, 4, 1, 0, 2}} {
		p := newPeer(t, s.g)
		var outs []engine.Outcome
		for _, k := range order {
			outs = append(outs, p.admit(all[k])[0])
		}
		if p.standing(forged.ID) != engine.Refused {
			t.Fatalf("order %d: the forged edit is held", i)
		}
		// Where it arrived last, it is refused for the fixed field.
		if last := outs[len(outs)-1]; order[len(order)-1] == 4 && (last.Verdict != engine.Refused || last.Refusal.Code != collection.CodeRuleFixed) {
			t.Fatalf("order %d: %+v", i, last)
		}
		if p.current(s.g.ID, poll.Key) != poll.ID {
			t.Fatalf("order %d: the poll reads %s", i, p.current(s.g.ID, poll.Key))
		}
	}
}

// rules.test.ts, "arriving in any order": a definition with onePer and
// final, a vote at its derived key, a vote at a wrong key and an edit under
// final reach the same verdicts in every order.
func TestRulesArrivingInAnyOrder(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, map[string][]space.Grant{"voter": {space.MustGrant("/record")}})
	d := s.define(founder, def("app.vote", "rules", obj("onePer", []any{"@author", "link:about"}, "final", true)), nil)
	a1 := s.assign(founder, alice, ids(d), "voter")
	parts := []collection.Part{{Kind: collection.PartAuthor}, {Kind: collection.PartLink, Name: "about"}}
	about := []record.Link{{Rel: "about", To: "poll.one"}}
	key, err := collection.OnePerKey(collection.PublicOneKey(s.g.ID), "app.vote", parts, alice.did, collection.Content{Links: about})
	if err != nil {
		t.Fatal(err)
	}
	vote := s.write(alice, "app.vote", key, obj("choice", float64(1)), ids(a1), retained, withLinks(about...))
	wrongKey := record.OwnerPart(alice.did) + ".one:0000000000000000000000000000000000000000"
	wrong := s.write(alice, "app.vote", wrongKey, obj("choice", float64(2)), ids(a1), retained, withLinks(about...))
	again := s.write(alice, "app.vote", key, obj("choice", float64(2)), ids(a1), withLinks(about...))
	all := []*record.Version{d, a1, vote, wrong, again}
	want := map[string]engine.Verdict{d.ID: engine.Stands, a1.ID: engine.Stands, vote.ID: engine.Stands, wrong.ID: engine.Refused, again.ID: engine.Refused}
	perms(len(all), func(order []int) {
		p := newPeer(t, s.g)
		for _, k := range order {
			p.admit(all[k])
		}
		for id, w := range want {
			if got := p.standing(id); got != w {
				t.Fatalf("order %v: %s is %v, want %v", order, id, got, w)
			}
		}
	})
}

// perms calls fn with every permutation of 0…n-1.
func perms(n int, fn func([]int)) {
	a := make([]int, n)
	for i := range a {
		a[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			fn(append([]int(nil), a...))
			return
		}
		for i := k; i < n; i++ {
			a[k], a[i] = a[i], a[k]
			rec(k + 1)
			a[k], a[i] = a[i], a[k]
		}
	}
	rec(0)
}

// topics.test.ts, "a record whose tags don't match": refused (02 §8.4); one
// whose tags are those its body gives stands; with no topics in force any
// tag is refused.
func TestTopicsTagsDontMatch(t *testing.T) {
	founder := newAccount(t, "founder", true)
	s := newScene(t, []*account{founder}, nil)
	d := s.define(founder, def("app.chat", "topics", []any{"channel"}), nil)
	tag, err := collection.Tag(collection.PublicTagKey(s.g.ID), "app.chat", "channel", "design")
	if err != nil {
		t.Fatal(err)
	}
	other, _ := collection.Tag(collection.PublicTagKey(s.g.ID), "app.chat", "channel", "sales")
	good := s.note(founder, "app.chat", obj("channel", "design"), ids(d), withTags(tag))
	bad := s.note(founder, "app.chat", obj("channel", "design"), ids(d), withTags(other))
	none := s.note(founder, "app.chat", obj("channel", "design"), ids(d))
	untopical := s.note(founder, "app.other", obj("channel", "design"), ids(d), withTags(tag))
	d2 := s.define(founder, def("app.other"), ids(d))
	untopical2 := s.note(founder, "app.other", obj("channel", "design"), ids(d2), withTags(tag))
	p := newPeer(t, s.g)
	p.expect(d, engine.Stands, "")
	p.expect(good, engine.Stands, "")
	p.expect(bad, engine.Refused, collection.CodeTagMismatch)
	p.expect(none, engine.Refused, collection.CodeTagMismatch)
	p.expect(untopical, engine.Stands, "") // no definition in force: no rules, no topics checked (§7.2)
	p.expect(d2, engine.Stands, "")
	p.expect(untopical2, engine.Refused, collection.CodeTagMismatch)
}

// space-catalog.test.ts, "a record that does not fit is kept and flagged":
// a body that fails its collection's schema stands (02 §9.6); a reader's
// validation flags it.
func TestSpaceCatalogKeptAndFlagged(t *testing.T) {
	founder := newAccount(t, "founder", true)
	s := newScene(t, []*account{founder}, nil)
	schema := obj("type", "object", "properties", obj("text", obj("type", "string")), "required", []any{"text"})
	d := s.define(founder, obj("name", "app.note", "version", float64(1), "schema", schema,
		"links", obj("about", obj("to", []any{"app.list"}, "cardinality", "one"))), nil)
	misfit := s.note(founder, "app.note", obj("text", float64(5)), ids(d),
		withLinks(record.Link{Rel: "undeclared", To: "x.y"}))
	undefined := s.note(founder, "app.nowhere", obj("anything", true), ids(d))
	p := newPeer(t, s.g)
	p.admit(d)
	p.expect(misfit, engine.Stands, "")
	p.expect(undefined, engine.Stands, "")
	in, _ := p.history(s.g.ID).Now().InForce("app.note")
	if in.Def == nil {
		t.Fatal("the definition is in force")
	}
	if issues := in.Def.Schema.Validate(misfit.Body); len(issues) == 0 {
		t.Fatal("a reader flags the body that does not fit")
	}
	if issues := collection.LinkIssues(misfit.Links, in, nil); len(issues) == 0 {
		t.Fatal("a reader flags the undeclared link")
	}
}

// 02 §7.1: byCreator is a fact about the record. At an owned key only its
// owner's first version stands, so others can't edit under a byCreator
// grant; at a shared key another member can start a chain of its own, but
// not edit the first one's.
func TestSpec_7_1ByCreatorOwnedAndShared(t *testing.T) {
	founder, alice, bob := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "bob", true)
	own := []any{[]any{"==", ".byCreator", true}}
	s := newScene(t, []*account{founder}, map[string][]space.Grant{"member": {space.MustGrant("/record", own...)}})
	d := s.define(founder, def("app.decision", "rules", obj("onePer", []any{"link:about"})), nil)
	a1 := s.assign(founder, alice, ids(d), "member")
	b1 := s.assign(founder, bob, ids(a1), "member")
	seen := ids(b1)
	note := s.note(alice, "app.note", obj("text", "mine"), seen)
	bobEdit := s.write(bob, "app.note", note.Key, obj("text", "bob's"), seen)
	about := []record.Link{{Rel: "about", To: "prop.one"}}
	key, _ := collection.OnePerKey(collection.PublicOneKey(s.g.ID), "app.decision", []collection.Part{{Kind: collection.PartLink, Name: "about"}}, "", collection.Content{Links: about})
	aliceFirst := s.write(alice, "app.decision", key, obj("ok", true), seen, retained, withLinks(about...))
	s.atKey[key] = nil
	bobFirst := s.write(bob, "app.decision", key, obj("ok", false), seen, retained, withLinks(about...))
	s.atKey[key] = aliceFirst
	bobOnAlice := s.write(bob, "app.decision", key, obj("ok", false), seen, withLinks(about...))
	s.atKey[key] = bobFirst
	bobOnBob := s.write(bob, "app.decision", key, obj("ok", true), seen, withLinks(about...))
	p := newPeer(t, s.g)
	p.admit(d, a1, b1)
	p.expect(note, engine.Stands, "")
	p.expect(bobEdit, engine.Refused, space.CodeStandingGrant)
	p.expect(aliceFirst, engine.Stands, "")
	p.expect(bobFirst, engine.Stands, "")
	p.expect(bobOnAlice, engine.Refused, space.CodeStandingGrant)
	p.expect(bobOnBob, engine.Stands, "")
}

// Re-judging goes both ways, in the batch of the change that causes it: a
// removal withdraws its member's versions; a concurrent removal of its
// author, arriving later, strikes it, and they stand again.
func TestRestandBothWays(t *testing.T) {
	founder, alice, bob, carol := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "bob", true), newAccount(t, "carol", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	b := s.assign(founder, bob, ids(a), "admin")
	c := s.assign(founder, carol, ids(b), "admin")
	note := s.note(alice, "app.notes", obj("t", "x"), ids(c), retained)
	bobRemovesAlice := s.remove(bob, alice, ids(c))
	carolRemovesBob := s.remove(carol, bob, ids(c))
	p := newPeer(t, s.g)
	p.admit(a, b, c, note)
	if p.current(s.g.ID, note.Key) != note.ID {
		t.Fatal("the note reads")
	}
	p.expect(bobRemovesAlice, engine.Stands, "")
	if p.standing(note.ID) != engine.Withdrawn || p.current(s.g.ID, note.Key) != "" {
		t.Fatal("the removal withdraws the note, and the record no longer reads")
	}
	p.expect(carolRemovesBob, engine.Stands, "")
	if p.standing(bobRemovesAlice.ID) != engine.Withdrawn {
		t.Fatal("Bob's removal, concurrent with his own, is struck")
	}
	if p.standing(note.ID) != engine.Stands || p.current(s.g.ID, note.Key) != note.ID {
		t.Fatal("the removal struck, the note stands and reads again")
	}
	if !p.history(s.g.ID).Now().IsMember(alice.did) {
		t.Fatal("alice is a member again")
	}
}
