package judge_test

import (
	"fmt"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/judge/judgetest"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// The adversarial list of issue "Spaces", each refused or withdrawn as the
// spec says, with a stable reason code; the merge-rule ones are also in
// package space's tests.

// A removed member backdating seen: a version is withdrawn (withdrawn/
// member), an access change does not count (withdrawn/struck).
func TestAttacksRemovedMemberBackdatingSeen(t *testing.T) {
	founder, alice, carol := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "carol", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "admin")
	c := s.assign(founder, carol, ids(a), "writer")
	rm := s.remove(founder, alice, ids(c))
	backNote := s.note(alice, "app.notes", obj("t", "x"), ids(c))
	backRemove := s.remove(alice, carol, ids(c))
	p := newPeer(t, s.g)
	p.admit(a, c, rm)
	p.expect(backNote, engine.Withdrawn, space.CodeWithdrawnMember)
	p.expect(backRemove, engine.Withdrawn, space.CodeWithdrawnStruck)
	if !p.history(s.g.ID).Now().IsMember(carol.did) {
		t.Fatal("carol removed by a removed member")
	}
}

// A member granting itself more than it holds: refused (access/cover).
func TestAttacksGrantingItselfMore(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, map[string][]space.Grant{
		"assigner": {space.MustGrant(space.CmdAssign), space.MustGrant("/record/write", []any{"==", ".collection", "app.notes"})},
		"admin":    {space.MustGrant("/")},
	})
	a := s.assign(founder, alice, nil, "assigner")
	more := s.assign(alice, alice, ids(a), "assigner", "admin")
	p := newPeer(t, s.g)
	p.admit(a)
	p.expect(more, engine.Refused, space.CodeAccessCover)
}

// A revoked key writing after its cutoff: refused when it saw the revoke,
// withdrawn when it had not.
func TestAttacksRevokedKeyWritingAfterCutoff(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	key := alice.signer.DID()
	rv := s.write(founder, "sys.revoke", "revoke:"+record.OwnerPart(key), obj("key", key, "root", alice.did, "cutoffs", obj()), ids(a))
	saw := s.note(alice, "app.notes", obj("t", "saw"), ids(rv))
	unseen := s.note(alice, "app.notes", obj("t", "unseen"), ids(a))
	p := newPeer(t, s.g)
	p.admit(a, rv)
	p.expect(saw, engine.Refused, space.CodeStandingRevoked)
	p.expect(unseen, engine.Withdrawn, space.CodeWithdrawnRevoked)
}

// A definition by someone without /collection/define: refused.
func TestAttacksDefinitionWithoutDefine(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	d := s.define(alice, def("app.mine"), ids(a))
	p := newPeer(t, s.g)
	p.admit(a)
	p.expect(d, engine.Refused, space.CodeAccessGrant)
	// Nor under a note that grants records only, whatever the role (02
	// §6.3; 06 §2.8).
	s2 := newScene(t, []*account{founder}, writerRoles)
	founder.newSession(t, "/record")
	d2 := s2.define(founder, def("app.mine"), nil)
	q := newPeer(t, s2.g)
	q.expect(d2, engine.Refused, "note/command")
}

// A delete of a definition that did not exist, as of what it saw: refused.
func TestAttacksDeleteOfDefinitionThatDidNotExist(t *testing.T) {
	founder := newAccount(t, "founder", true)
	s := newScene(t, []*account{founder}, nil)
	d := s.define(founder, def("app.x"), nil)
	del := s.write(founder, "sys.collection", "collection:app.x", nil, nil) // seen absent: the genesis alone
	p := newPeer(t, s.g)
	p.admit(d)
	p.expect(del, engine.Refused, space.CodeAccessNothing)
}

// Grinding ids to win a merge: two admins give a member roles at once;
// whichever id is lower, the member holds what both give, and the
// member's versions stand or not the same on every peer.
func TestAttacksGrindingIDsToWinAMerge(t *testing.T) {
	founder, alice, bob, carol := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "bob", true), newAccount(t, "carol", true)
	roles := map[string][]space.Grant{"admin": {space.MustGrant(space.CmdSpace), space.MustGrant("/record")}, "writer": {space.MustGrant("/record")}, "reader": {}}
	s := newScene(t, []*account{founder}, roles)
	a := s.assign(founder, alice, nil, "admin")
	b := s.assign(founder, bob, ids(a), "admin")
	c := s.assign(founder, carol, ids(b), "writer")
	key := "member:" + record.OwnerPart(carol.did)
	fromAlice := s.assign(alice, carol, ids(c), "writer", "admin")
	var fromBob *record.Version
	for {
		s.atKey[key] = c
		fromBob = s.assign(bob, carol, ids(c), "reader") // Bob grinds until his id sorts lower
		if fromBob.ID < fromAlice.ID {
			break
		}
	}
	note := s.note(carol, "app.notes", obj("t", "x"), ids(c))
	for _, order := range [][]*record.Version{{fromAlice, fromBob, note}, {fromBob, note, fromAlice}, {note, fromAlice, fromBob}} {
		p := newPeer(t, s.g)
		p.admit(a, b, c)
		p.admit(order...)
		if roles := p.history(s.g.ID).Now().Roles(carol.did); len(roles) != 0 {
			t.Fatalf("carol holds %v: concurrent assignments give what both give, here nothing", roles)
		}
		if p.standing(note.ID) != engine.Withdrawn {
			t.Fatal("carol's note stands though no role lets her write now")
		}
	}
}

// A seen naming 64 unknown ids: the version waits for them (later, 02
// §9.5), held aside within the store's bound, and is judged when they come.
func TestAttacksSeenNaming64UnknownIDs(t *testing.T) {
	founder := newAccount(t, "founder", true)
	s := newScene(t, []*account{founder}, nil)
	var unknown []string
	for i := 0; i < 64; i++ {
		unknown = append(unknown, canonical.IDOf([]byte(fmt.Sprint("nothing ", i))).String())
	}
	st := judgetest.Store(t, judge.NewSpaceJudge(&identity.Checker{}), s.g, &engine.Options{MaxWaiting: 8})
	var vs []*record.Version
	for i := 0; i < 20; i++ {
		vs = append(vs, s.note(founder, "app.notes", obj("i", float64(i)), unknown))
	}
	outs, err := st.Admit(ctx, "mallory", vs)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Verdict != engine.Later {
			t.Fatalf("%+v", o)
		}
	}
	n := 0
	err = st.Waiting(func(v *record.Version, waits []string) bool {
		n++
		if len(waits) != 64 {
			t.Fatalf("waits for %d", len(waits))
		}
		return true
	})
	if err != nil || n != 8 {
		t.Fatalf("%d waiting, want the bound 8: %v", n, err)
	}
}

// A cycle of seen references can't be built: an id covers seen, so no
// version names one made after it. What is left is a seen naming a held
// version that is not an access change: refused, never waited on for
// ever.
func TestAttacksCycleOfSeen(t *testing.T) {
	founder := newAccount(t, "founder", true)
	s := newScene(t, []*account{founder}, nil)
	n1 := s.note(founder, "app.notes", obj("i", float64(1)), nil)
	n2 := s.note(founder, "app.notes", obj("i", float64(2)), ids(n1))
	p := newPeer(t, s.g)
	p.admit(n1)
	p.expect(n2, engine.Refused, space.CodeSeenNotAccess)
}

// Access changes without retain: refused (02 §4.5).
func TestAttacksAccessChangeWithoutRetain(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	o := a.Object().Clone()
	o.Delete("retain")
	v, err := record.Sign(o, founder.signer)
	if err != nil {
		t.Fatal(err)
	}
	p := newPeer(t, s.g)
	p.expect(v, engine.Refused, judge.CodeRetainRequired)
}

// A forked line (02 §4.10): once a sys.fork stands, everything the key
// signed in that collection at the proven place or after is withdrawn,
// on both branches; its earlier versions and other collections stand.
func TestAttacksForkedLineWithdrawn(t *testing.T) {
	founder, alice, bob := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "bob", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	b := s.assign(founder, bob, ids(a), "writer")
	v0 := s.note(alice, "app.chat", obj("i", float64(0)), ids(b))
	v1 := s.note(alice, "app.chat", obj("i", float64(1)), ids(b))
	alice.logs["app.chat"] = v0 // a copy of the key, elsewhere
	w1 := s.note(alice, "app.chat", obj("i", float64(-1)), ids(b))
	photo := s.note(alice, "app.photos", obj("i", float64(0)), ids(b))
	proof, ok := record.Fork(v1, w1)
	if !ok {
		t.Fatal("no fork")
	}
	f := s.write(bob, "sys.fork", "fork:"+space.LineTag(alice.signer.DID(), "app.chat"), obj("proof", proof.Value()), ids(b))
	after := s.note(alice, "app.chat", obj("i", float64(2)), ids(f))
	p := newPeer(t, s.g)
	p.admit(a, b, v0, v1, w1, photo)
	p.expect(f, engine.Stands, "")
	for id, want := range map[string]engine.Verdict{v0.ID: engine.Stands, v1.ID: engine.Withdrawn, w1.ID: engine.Withdrawn, photo.ID: engine.Stands} {
		if got := p.standing(id); got != want {
			t.Fatalf("%s: %v, want %v", id, got, want)
		}
	}
	p.expect(after, engine.Refused, space.CodeStandingForked)
	// A proof of a line that is not forked is refused.
	bad := s.write(bob, "sys.fork", "fork:"+space.LineTag(alice.signer.DID(), "app.chat"),
		obj("proof", obj("kind", "fork", "versions", []any{v0.Stub().Object(), v1.Stub().Object()})), ids(f))
	p.expect(bad, engine.Refused, space.CodeAccessProof)
}

// attacks.test.ts, "a member cannot freeze a record by skipping ahead…"
// (02 §4.7): a member allowed to edit writes seq 2^53 − 1, which nothing
// could outrank, after the record's current version; it must follow the
// version its prev names, so it is refused, whatever order the versions
// come in, and the record still reads its real current version and takes
// the next edit.
func TestAttacksAMemberCannotFreezeARecordBySkippingAhead(t *testing.T) {
	founder, alice, mallory := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "mallory", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	m := s.assign(founder, mallory, ids(a), "writer")
	key, err := record.FreshKey(alice.did)
	if err != nil {
		t.Fatal(err)
	}
	A := s.write(alice, "app.list", key, obj("items", []any{"milk"}), ids(m))
	B := s.write(mallory, "app.list", key, obj("items", []any{"milk", "eggs"}), ids(m))
	skip := func(seq float64, genesis string) *record.Version {
		o := canonical.NewObject("collection", "app.list", "createdAt", "2026-01-01T09:00:00.000Z", "key", key, "space", s.g.ID,
			"seq", seq, "prev", B.ID, "genesis", genesis, "seen", []any{m.ID}, "body", obj("items", []any{"frozen"}))
		last := mallory.logs["app.list"]
		o.Set("log", canonical.NewObject("n", float64(last.Log.N+1), "prev", last.ID))
		v, err := record.Sign(o, mallory.signer)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	frozen := skip(float64(record.MaxSafeInteger), A.ID)
	nine := skip(9, A.ID)
	wrongFirst := skip(2, B.ID)
	C := s.write(alice, "app.list", key, obj("items", []any{"milk", "eggs", "bread"}), ids(m))
	for v, code := range map[*record.Version]string{frozen: record.CodeChainSeq, nine: record.CodeChainSeq, wrongFirst: record.CodeChainGenesis} {
		p := newPeer(t, s.g)
		p.admit(a, m, A, B)
		p.expect(v, engine.Refused, code)
	}
	inNineOrders(t, s.g, []*record.Version{a, m, A, B, frozen, nine, wrongFirst, C}, func(order string, p *peer) {
		wantStanding(t, order, p, map[*record.Version]engine.Verdict{
			frozen: engine.Refused, nine: engine.Refused, wrongFirst: engine.Refused, C: engine.Stands,
		})
		if cur := p.current(s.g.ID, key); cur != C.ID {
			t.Fatalf("%s: the record reads %s, want the real edit after it", order, cur)
		}
	})
}
