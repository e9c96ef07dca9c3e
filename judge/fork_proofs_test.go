package judge_test

import (
	"testing"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// forkProof writes by a a sys.fork proving that x and y fork their line,
// as of seen.
func (s *scene) forkProof(a *account, x, y *record.Version, seen []string) *record.Version {
	s.t.Helper()
	p, ok := record.Fork(x, y)
	if !ok {
		s.t.Fatal("no fork")
	}
	return s.write(a, "sys.fork", "fork:"+space.LineTag(x.Author, x.Collection), obj("proof", p.Value()), seen)
}

// 02 §4.10: a fork is "two versions with the same author, the same space,
// the same collection and the same log.n, with different ids, each validly
// signed (§3.3). Either may be a stub." A fork in a line whose versions
// are retained — an access-history line, a collection with history "all"
// — is proven with both as stubs: §4.6's "a retained version travels
// whole" is about a version travelling, not its envelope quoted in a proof.
func TestSpec_4_10EitherMayBeAStub(t *testing.T) {
	founder, alice, bob, carol := newAccount(t, "founder", true), newAccount(t, "alice", true), newAccount(t, "bob", true), newAccount(t, "carol", true)
	s := newScene(t, []*account{founder}, writerRoles)
	logDef := s.define(founder, def("app.log", "history", "all"), nil)
	a := s.assign(founder, alice, ids(logDef), "admin")
	// Alice's key, and a copy of it, each write at place 0 of her
	// sys.assign line and of her app.log line.
	ab := s.assign(alice, bob, ids(a), "writer")
	delete(alice.logs, "sys.assign")
	ac := s.assign(alice, carol, ids(a), "writer")
	l1 := s.note(alice, "app.log", obj("line", "one"), ids(a), retained)
	delete(alice.logs, "app.log")
	l2 := s.note(alice, "app.log", obj("line", "two"), ids(a), retained)
	accessProof := s.forkProof(founder, ab, ac, ids(ab, ac))
	logProof := s.forkProof(founder, l1, l2, ids(accessProof))
	for _, p := range []*record.Version{accessProof, logProof} {
		body, _ := p.Body.(interface{ Get(string) (any, bool) })
		pv, _ := body.Get("proof")
		quoted, err := record.ParseLineProof(pv, &record.Verifier{})
		if err != nil {
			t.Fatalf("the proof as written: %v", err)
		}
		if !quoted.A.IsStub() || !quoted.B.IsStub() || !quoted.A.Retain {
			t.Fatal("the proof quotes two retained versions as stubs")
		}
	}
	vs := []*record.Version{logDef, a, ab, ac, l1, l2, accessProof, logProof}
	inNineOrders(t, s.g, vs, func(order string, p *peer) {
		wantStanding(t, order, p, map[*record.Version]engine.Verdict{
			accessProof: engine.Stands, logProof: engine.Stands,
			ab: engine.Withdrawn, ac: engine.Withdrawn, l1: engine.Withdrawn, l2: engine.Withdrawn,
		})
	})
}

// 02 §4.10: once a sys.fork for a key's line stands, "every version that
// key signed in that collection of the space at the proven place or after
// it is withdrawn (§9.5), whichever branch it is on", and "a fork proven by
// anyone is proven to everyone". In an access-history line the changes
// withdrawn take with them what they gave — the members they added, and
// what those wrote — whatever the proof's own seen names: whoever proves a
// fork holds both branches, and what a proof withdraws does not depend on
// what its author saw.
func TestSpec_4_10AForkProvenByAnyoneIsProvenToEveryone(t *testing.T) {
	founder, alice := newAccount(t, "founder", true), newAccount(t, "alice", true)
	dan, bob, carol, eve := newAccount(t, "dan", true), newAccount(t, "bob", true), newAccount(t, "carol", true), newAccount(t, "eve", true)
	s := newScene(t, []*account{founder}, writerRoles)
	a := s.assign(founder, alice, nil, "admin")
	ad := s.assign(alice, dan, ids(a), "writer") // place 0 of Alice's sys.assign line
	ab := s.assign(alice, bob, ids(ad), "writer")
	alice.logs["sys.assign"] = ad // a copy of Alice's key writes at place 1 too
	ac := s.assign(alice, carol, ids(ad), "writer")
	ae := s.assign(alice, eve, ids(ab), "writer") // place 2, after one branch
	nd := s.note(dan, "app.notes", obj("t", "dan"), ids(ad))
	nb := s.note(bob, "app.notes", obj("t", "bob"), ids(ab))
	nc := s.note(carol, "app.notes", obj("t", "carol"), ids(ac))
	ne := s.note(eve, "app.notes", obj("t", "eve"), ids(ae))
	written := []*record.Version{a, ad, ab, ac, ae, nd, nb, nc, ne}

	for _, tc := range []struct {
		name string
		seen []string
	}{
		{"the proof saw both branches", ids(ab, ac, ae)},
		{"the proof saw neither", ids(ad)},
		{"the proof saw one", ids(ac)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			delete(s.atKey, "fork:"+space.LineTag(alice.signer.DID(), "sys.assign")) // each is a first proof
			proof := s.forkProof(founder, ab, ac, tc.seen)
			after := s.note(bob, "app.notes", obj("t", "after"), ids(proof))
			vs := append(append([]*record.Version{}, written...), proof, after)
			inNineOrders(t, s.g, vs, func(order string, p *peer) {
				wantStanding(t, order, p, map[*record.Version]engine.Verdict{
					proof: engine.Stands, a: engine.Stands, ad: engine.Stands, nd: engine.Stands,
					ab: engine.Withdrawn, ac: engine.Withdrawn, ae: engine.Withdrawn,
					nb: engine.Withdrawn, nc: engine.Withdrawn, ne: engine.Withdrawn,
					after: engine.Refused,
				})
				now := p.history(s.g.ID).Now()
				if !now.IsMember(dan.did) {
					t.Fatalf("%s: the change before the proven place stands, and Dan with it", order)
				}
				for _, m := range []*account{bob, carol, eve} {
					if now.IsMember(m.did) {
						t.Fatalf("%s: %s is a member by a change of a line proven forked", order, m.name)
					}
				}
				if from, ok := now.ForkedFrom(alice.signer.DID(), "sys.assign"); !ok || from != 1 {
					t.Fatalf("%s: the line is forked from %d %v, want 1", order, from, ok)
				}
			})
		})
	}
}
