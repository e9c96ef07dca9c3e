package judge_test

import (
	"encoding/base64"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// 02 §9.4: a version is withdrawn when the access history's judgement
// fails on "a removal of its author … that it had not seen", and §4.10: "a
// removal or a demotion … each takes away what it had not seen and did not
// keep". What a removal took away stays taken when the member is let in
// again: the version is judged as of its own seen and the removals and
// demotions it had not seen, not by whether its author is a member now.
func TestSpec_9_4ARemovalOfItsAuthorThatItHadNotSeen(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, map[string][]space.Grant{"writer": writerRoles["writer"], "reader": {}})
	a := s.assign(founder, alice, nil, "writer")
	honest := s.note(alice, "app.notes", obj("t", "before"), ids(a))
	rm := s.remove(founder, alice, ids(a))
	backdated := s.note(alice, "app.notes", obj("t", "backdated"), ids(a)) // written after her removal, as of before it
	back := s.assign(founder, alice, ids(rm), "writer")                    // readmitted
	fresh := s.note(alice, "app.notes", obj("t", "after"), ids(back))
	// A demotion that keeps what its writer had seen of her, and the role
	// given back.
	demote := s.write(founder, "sys.assign", "member:"+record.OwnerPart(alice.did), obj("member", alice.did, "roles", []any{"reader"},
		"keep", obj(alice.signer.DID(), obj("app.notes", float64(fresh.Log.N)))), ids(back))
	demoted := s.note(alice, "app.notes", obj("t", "as a writer still"), ids(back))
	promote := s.assign(founder, alice, ids(demote), "writer")
	vs := []*record.Version{a, honest, rm, backdated, back, fresh, demote, demoted, promote}
	inNineOrders(t, s.g, vs, func(order string, p *peer) {
		wantStanding(t, order, p, map[*record.Version]engine.Verdict{
			honest: engine.Withdrawn, backdated: engine.Withdrawn, demoted: engine.Withdrawn, fresh: engine.Stands,
			rm: engine.Stands, back: engine.Stands, demote: engine.Stands, promote: engine.Stands,
		})
		if !p.history(s.g.ID).Now().IsMember(alice.did) {
			t.Fatalf("%s: alice was let in again", order)
		}
	})
	// What a removal kept stays, through the readmission too; what it did
	// not keep stays withdrawn.
	keptNote := s.note(alice, "app.notes", obj("t", "seen by the remover"), ids(promote))
	rm2 := s.write(founder, "sys.remove", "remove:"+record.OwnerPart(alice.did),
		obj("member", alice.did, "keep", obj(alice.signer.DID(), obj("app.notes", float64(keptNote.Log.N)))), ids(promote))
	unkept := s.note(alice, "app.notes", obj("t", "not seen by the remover"), ids(promote))
	again := s.assign(founder, alice, ids(rm2), "writer")
	vs = append(vs, keptNote, rm2, unkept, again)
	inNineOrders(t, s.g, vs, func(order string, p *peer) {
		wantStanding(t, order, p, map[*record.Version]engine.Verdict{
			honest: engine.Withdrawn, backdated: engine.Withdrawn, fresh: engine.Stands,
			keptNote: engine.Stands, unkept: engine.Withdrawn, rm2: engine.Stands, again: engine.Stands,
		})
	})
}

// joinBy writes m's join by the invite key ik, as of seen.
func (s *scene) joinBy(m *account, ik *identity.PrivateKey, seen []string, roles ...string) *record.Version {
	s.t.Helper()
	sig, err := ik.Sign(space.JoinProof(s.g.ID, ik.DID(), m.did))
	if err != nil {
		s.t.Fatal(err)
	}
	l := make([]any, len(roles))
	for i, r := range roles {
		l[i] = r
	}
	return s.write(m, "sys.assign", "member:"+record.OwnerPart(m.did), obj("member", m.did, "roles", l,
		"invite", obj("key", ik.DID(), "sig", base64.RawURLEncoding.EncodeToString(sig))), seen)
}

func (s *scene) openInvite(by *account, ik *identity.PrivateKey, seen []string, roles ...string) *record.Version {
	l := make([]any, len(roles))
	for i, r := range roles {
		l[i] = r
	}
	return s.write(by, "sys.invite", "invite:"+record.OwnerPart(ik.DID()), obj("key", ik.DID(), "roles", l), seen)
}

// docs/spaces.md §4, joining by an invite: a member removed — or who left —
// comes back only by a new act of an admin: an assignment, or an invite
// opened after the removal. Signing the same join again, or joining by
// any invite opened before the removal, is refused; a join backdated to
// before the removal is struck by it. The writes its backdated seen would
// revive stay withdrawn.
func TestSpacesARemovedMemberComesBackOnlyByANewActOfAnAdmin(t *testing.T) {
	founder, bob, cy := newAccount(t, "founder", true), newAccount(t, "bob", true), newAccount(t, "cy", true)
	s := newScene(t, []*account{founder}, writerRoles)
	ik, ik2, ik3 := mustKey(t), mustKey(t), mustKey(t)
	inv := s.openInvite(founder, ik, nil, "writer")
	inv2 := s.openInvite(founder, ik2, ids(inv), "writer")
	join := s.joinBy(bob, ik, ids(inv2), "writer")
	note := s.note(bob, "app.notes", obj("t", "while a member"), ids(join))
	rm := s.remove(founder, bob, ids(join))
	bobKey := "member:" + record.OwnerPart(bob.did)
	again := s.joinBy(bob, ik, ids(rm), "writer") // the same join, signed again
	s.atKey[bobKey] = join
	other := s.joinBy(bob, ik2, ids(rm), "writer") // another invite opened before the removal
	s.atKey[bobKey] = join
	backJoin := s.joinBy(bob, ik, ids(join), "writer") // backdated to before the removal
	backNote := s.note(bob, "app.notes", obj("t", "backdated"), ids(join))
	// Cy joins by the first invite, leaves, and tries to come back by it.
	cyJoin := s.joinBy(cy, ik, ids(rm), "writer")
	cyLeaves := s.remove(cy, cy, ids(cyJoin))
	cyAgain := s.joinBy(cy, ik, ids(cyLeaves), "writer")

	refused := map[*record.Version]string{again: space.CodeAccessInvite, other: space.CodeAccessInvite, cyAgain: space.CodeAccessInvite}
	base := []*record.Version{inv, inv2, join, note, rm, backJoin, backNote, cyJoin, cyLeaves}
	for v, code := range refused {
		p := newPeer(t, s.g)
		p.admit(base...)
		p.expect(v, engine.Refused, code)
	}
	inNineOrders(t, s.g, base, func(order string, p *peer) {
		wantStanding(t, order, p, map[*record.Version]engine.Verdict{
			join: engine.Stands, rm: engine.Stands, backJoin: engine.Withdrawn,
			note: engine.Withdrawn, backNote: engine.Withdrawn, cyJoin: engine.Stands, cyLeaves: engine.Stands,
		})
		now := p.history(s.g.ID).Now()
		if now.IsMember(bob.did) || now.IsMember(cy.did) {
			t.Fatalf("%s: a removed member came back by an invite opened before", order)
		}
	})

	// A new act of an admin: an invite opened after the removal.
	inv3 := s.openInvite(founder, ik3, ids(cyLeaves), "writer")
	s.atKey[bobKey] = backJoin
	rejoin := s.joinBy(bob, ik3, ids(inv3), "writer")
	after := s.note(bob, "app.notes", obj("t", "back"), ids(rejoin))
	vs := append(append([]*record.Version{}, base...), inv3, rejoin, after)
	inNineOrders(t, s.g, vs, func(order string, p *peer) {
		wantStanding(t, order, p, map[*record.Version]engine.Verdict{
			rejoin: engine.Stands, after: engine.Stands, note: engine.Withdrawn, backNote: engine.Withdrawn,
		})
		if !p.history(s.g.ID).Now().IsMember(bob.did) {
			t.Fatalf("%s: bob joins by an invite opened after his removal", order)
		}
	})
}

func mustKey(t *testing.T) *identity.PrivateKey {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
