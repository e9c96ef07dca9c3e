package judge_test

import (
	"errors"
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// validation.test.ts, with the full judge: the crypto gate comes first, and
// a forged copy never stands.
func TestValidationCryptoGate(t *testing.T) {
	founder := newAccount(t, "founder", true)
	s := newScene(t, []*account{founder}, nil)
	n := s.note(founder, "app.notes", obj("t", "x"), nil)
	o := n.Object().Clone()
	o.Set("body", obj("t", "forged"))
	forged, err := record.FromValue(o)
	if err != nil {
		t.Fatal(err)
	}
	p := newPeer(t, s.g)
	p.expect(forged, engine.Refused, record.CodeBody)
	o = n.Object().Clone()
	o.Set("signature", n.Signature[:10]+"AAAA"+n.Signature[14:])
	badSig, _ := record.FromValue(o)
	p.expect(badSig, engine.Refused, record.CodeSignature)
	p.expect(n, engine.Stands, "")
}

// A space whose genesis is not held holds its versions as waiting for it
// (the space's id), within the store's bound; adding the genesis judges
// them.
func TestValidationWaitsForTheGenesis(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	n := s.note(alice, "app.notes", obj("t", "x"), ids(a))
	p := newPeer(t, nil)
	for _, o := range p.admit(n, a) {
		if o.Verdict != engine.Later {
			t.Fatalf("%+v", o)
		}
	}
	var waits [][]string
	p.st.Waiting(func(v *record.Version, w []string) bool { waits = append(waits, w); return true })
	if len(waits) != 2 {
		t.Fatalf("waiting %v", waits)
	}
	if err := judge.AddGenesis(ctx, p.st, s.g); err != nil {
		t.Fatal(err)
	}
	if p.standing(a.ID) != engine.Stands || p.standing(n.ID) != engine.Stands {
		t.Fatalf("after the genesis: %v %v", p.standing(a.ID), p.standing(n.ID))
	}
	// A genesis handed over for another id is refused.
	if _, err := space.ParseGenesisFor(a.ID, s.g.Canonical()); !isCode(err, space.CodeGenesisID) {
		t.Fatalf("%v", err)
	}
}

// Absent seen, a version is judged as of the genesis alone (02 §3.1):
// a founder may write, a member assigned since may not.
func TestValidationAbsentSeenIsTheGenesis(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "writer")
	fn := s.note(founder, "app.notes", obj("t", "f"), nil)
	an := s.note(alice, "app.notes", obj("t", "a"), nil)
	p := newPeer(t, s.g)
	p.admit(a)
	p.expect(fn, engine.Stands, "")
	p.expect(an, engine.Refused, space.CodeStandingMember)
}

// 02 §9.4 step 2, 06 §1.3: in a space that admits only the account itself,
// a version under a note that does not grant /account/write is refused.
func TestValidationAccountSpace(t *testing.T) {
	me := newAccount(t, "me", true)
	g, err := space.NewGenesis(space.GenesisOptions{Name: "registry", Founders: []string{me.did}, Account: true,
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: "r"})
	if err != nil {
		t.Fatal(err)
	}
	s := &scene{t: t, g: g, atKey: map[string]*record.Version{}}
	ok := s.note(me, "sys.joined", obj("space", "x"), nil)
	ok2 := s.write(me, "sys.joined", "space:x", obj("space", "x"), nil)
	me.newSession(t, "/record")
	recordsOnly := s.write(me, "sys.joined", "space:y", obj("space", "y"), nil)
	p := newPeer(t, g)
	p.expect(ok, engine.Refused, record.CodeKeySys) // sys.* is never at an owned key (02 §4.1)
	p.expect(ok2, engine.Stands, "")
	p.expect(recordsOnly, engine.Refused, space.CodeStandingAccount)
}

func isCode(err error, code string) bool {
	var r *record.Refusal
	return errors.As(err, &r) && r.Code == code
}
