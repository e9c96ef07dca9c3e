package judge_test

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/judge/judgetest"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// rings is the keys a test node holds: one ring a space.
type rings map[string]*seal.Keyring

func (r rings) Keyring(id string) *seal.Keyring { return r[id] }

func newPrivatePeer(t testing.TB, g *space.Genesis, keys judge.KeyRings) *peer {
	t.Helper()
	j := judge.NewPrivateJudge(&identity.Checker{}, keys)
	return &peer{t: t, st: judgetest.Store(t, j, g, nil), j: j.SpaceJudge}
}

// privateSpace is a private space written by Ada (founder) and Ben (a
// writer): two sealed definitions, records under K₀, a key change to K₁
// boxed to Ben, and records under K₁ — every version a member's node would
// write — and versions only a peer that reads bodies can refuse.
type privateSpace struct {
	g       *space.Genesis
	k0, k1  *seal.Key
	member  rings // Ben's keys, taken as his node takes them
	honest  []*record.Version
	bad     map[string]*record.Version // by the code a member refuses it with
	plain   *record.Version            // a body in the clear: every peer refuses it
	chatKey string
}

const (
	voteDef = `{"name":"app.vote","version":1,"schema":{"type":"object"},"links":{"about":{"to":"*"}},"rules":{"onePer":["@author","link:about"]},"topics":["link:about"]}`
	chatDef = `{"name":"app.chat","version":1,"schema":{"type":"object"},"topics":["channel"],"rules":{"fixed":["channel"]}}`
)

func newPrivateSpace(t *testing.T) *privateSpace {
	ada, ben := newAccount(t, "ada", true), newAccount(t, "ben", true)
	ps := &privateSpace{k0: seal.NewKey(), k1: seal.NewKey(), bad: map[string]*record.Version{}}
	g, err := space.NewGenesis(space.GenesisOptions{Name: "private", Private: true, Founders: []string{ada.did},
		Roles:     map[string][]space.Grant{"writer": {space.MustGrant("/record")}},
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: t.Name(), EncryptionKeyID: ps.k0.ID()})
	if err != nil {
		t.Fatal(err)
	}
	ps.g = g
	s := &scene{t: t, g: g, atKey: map[string]*record.Version{}}
	sealed := func(k *seal.Key, coll, key string, c collection.Content) *canonical.Object {
		b, err := seal.SealBody(k, g.ID, coll, key, c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	def := func(text string) (*collection.Definition, any) {
		v, err := canonical.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		d, err := collection.ParseDefinition(v)
		if err != nil {
			t.Fatal(err)
		}
		return d, v
	}
	vote, voteBody := def(voteDef)
	chat, chatBody := def(chatDef)
	tags := func(d *collection.Definition, k *seal.Key, c collection.Content) opt {
		ts, err := d.Tags(k.TagKey(), c)
		if err != nil {
			t.Fatal(err)
		}
		return withTags(ts...)
	}

	a1 := s.assign(ada, ben, nil, "writer")
	d1 := s.write(ada, "sys.collection", "collection:app.vote", sealed(ps.k0, "sys.collection", "collection:app.vote", collection.Content{Body: voteBody}), ids(a1))
	d2 := s.write(ada, "sys.collection", "collection:app.chat", sealed(ps.k0, "sys.collection", "collection:app.chat", collection.Content{Body: chatBody}), ids(d1))
	seen := ids(d2)

	// A vote under K₀: its key derived from K₀, its tag too.
	pollC := collection.Content{Body: canonical.NewObject("choice", 1.0), Links: []record.Link{{Rel: "about", To: "akthxqofxox3iszhpi5j3zhl6a.poll"}}}
	voteKey, err := vote.OnePerKey(ps.k0.OneKey(), ada.did, pollC)
	if err != nil {
		t.Fatal(err)
	}
	v1 := s.write(ada, "app.vote", voteKey, sealed(ps.k0, "app.vote", voteKey, pollC), seen, retained, tags(vote, ps.k0, pollC))
	// Ben's chat message under K₀, channel fixed.
	chatC := collection.Content{Body: canonical.NewObject("channel", "design", "text", "hi")}
	ps.chatKey, _ = record.FreshKey(ben.did)
	c1 := s.write(ben, "app.chat", ps.chatKey, sealed(ps.k0, "app.chat", ps.chatKey, chatC), seen, retained, tags(chat, ps.k0, chatC))

	// Ben publishes his member key; Ada changes the key and boxes K₁ to him.
	benKey := seal.NewMemberKey()
	mk := s.write(ben, seal.MemberKeyCollection, seal.MemberKeyKey(ben.did), (&seal.MemberKeyRecord{Member: ben.did, Key: benKey.Public()}).Object(), seen)
	kc, err := seal.NewKeyChange(g.ID, ps.k0.ID(), ps.k1, []*seal.Key{ps.k0})
	if err != nil {
		t.Fatal(err)
	}
	kv := s.write(ada, seal.KeyChangeCollection, seal.KeyChangeKey(ps.k1.ID()), kc.Object(), seen)
	box, err := seal.NewBox(ps.k1, g.ID, ben.did, benKey.Public())
	if err != nil {
		t.Fatal(err)
	}
	bv := s.write(ada, seal.BoxCollection, seal.BoxKey(ps.k1.ID(), ben.did), box.Object(), ids(kv))

	// Under K₁: Ben edits his message (channel kept), and writes another.
	after := ids(kv)
	chatC2 := collection.Content{Body: canonical.NewObject("channel", "design", "text", "hi again")}
	c2 := s.write(ben, "app.chat", ps.chatKey, sealed(ps.k1, "app.chat", ps.chatKey, chatC2), after, tags(chat, ps.k1, chatC2))
	otherKey, _ := record.FreshKey(ben.did)
	chatC3 := collection.Content{Body: canonical.NewObject("channel", "ops", "text", "deploy")}
	c3 := s.write(ben, "app.chat", otherKey, sealed(ps.k1, "app.chat", otherKey, chatC3), after, retained, tags(chat, ps.k1, chatC3))
	ps.honest = []*record.Version{a1, d1, d2, v1, c1, mk, kv, bv, c2, c3}

	// Ben's node takes its keys as a member's does: K₀ from his invite,
	// K₁ from his box with its key change.
	ring, _ := seal.NewKeyring(g.ID, ps.k0.ID())
	ring.Offer(ps.k0)
	rb, _ := seal.ReadBox(bv)
	k1, err := rb.Open(benKey, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	ring.Offer(k1)
	rkc, _ := seal.ReadKeyChange(kv.Body)
	if err := ring.Take(rkc); err != nil {
		t.Fatal(err)
	}
	ps.member = rings{g.ID: ring}

	// What only a reader of bodies refuses. Each is a version its author
	// could sign; none is one an honest writer would.
	var wrong [20]byte
	badKey := record.OwnerPart(ada.did) + ".one:" + hex.EncodeToString(wrong[:])
	pollC2 := collection.Content{Body: canonical.NewObject("choice", 2.0), Links: []record.Link{{Rel: "about", To: "akthxqofxox3iszhpi5j3zhl6a.other"}}}
	ps.bad[collection.CodeRuleOnePer] = s.write(ada, "app.vote", badKey, sealed(ps.k1, "app.vote", badKey, pollC2), after, retained, tags(vote, ps.k1, pollC2))
	k4, _ := record.FreshKey(ben.did)
	ps.bad[collection.CodeTagMismatch] = s.write(ben, "app.chat", k4, sealed(ps.k1, "app.chat", k4, chatC3), after, retained, tags(chat, ps.k0, chatC3))
	k5, _ := record.FreshKey(ben.did)
	ps.bad[seal.CodeOpen] = s.write(ben, "app.chat", k5, c3.Body, after, retained, withTags(c3.Tags...)) // c3's sealed body, moved
	chatC4 := collection.Content{Body: canonical.NewObject("channel", "random", "text", "moved")}
	ps.bad[collection.CodeRuleFixed] = s.write(ben, "app.chat", ps.chatKey, sealed(ps.k1, "app.chat", ps.chatKey, chatC4), after, tags(chat, ps.k1, chatC4))
	k6, _ := record.FreshKey(ben.did)
	ps.plain = s.write(ben, "app.chat", k6, canonical.NewObject("channel", "design", "text", "in the clear"), after, retained, tags(chat, ps.k0, chatC))
	return ps
}

// state is what a peer holds of the space's versions: each one's standing,
// and the current version of each key written.
func (p *peer) state(ps *privateSpace, vs []*record.Version) map[string]string {
	out := map[string]string{}
	for _, v := range vs {
		out[v.ID] = p.standing(v.ID).String()
		out["current "+v.Key] = p.current(ps.g.ID, v.Key)
	}
	return out
}

// A carrier-style node without keys and a member's node take the same
// versions of a private space in any order and end with the same held
// state: every honest version standing, the same current versions.
func TestPrivateConvergence(t *testing.T) {
	ps := newPrivateSpace(t)
	var want map[string]string
	r := rand.New(rand.NewPCG(16, 16))
	for round := range 24 {
		order := r.Perm(len(ps.honest))
		for _, keys := range []judge.KeyRings{nil, ps.member} {
			p := newPrivatePeer(t, ps.g, keys)
			for at := 0; at < len(order); {
				n := 1 + r.IntN(3)
				var batch []*record.Version
				for _, i := range order[at:min(at+n, len(order))] {
					batch = append(batch, ps.honest[i])
				}
				p.admit(batch...)
				at += n
			}
			got := p.state(ps, ps.honest)
			for _, v := range ps.honest {
				if got[v.ID] != engine.Stands.String() {
					t.Fatalf("round %d, keys %v: %s %s is %v", round, keys != nil, v.Collection, v.Key, got[v.ID])
				}
			}
			if want == nil {
				want = got
				continue
			}
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("round %d, keys %v: %s is %v, first peer %v", round, keys != nil, k, got[k], v)
				}
			}
		}
	}
}

// What a peer without the key skips and a member refuses: a onePer key
// not derived from the body, tags not the body's, a sealed body moved to
// another record, a fixed field changed. A body in the clear is refused by
// both (docs/private-spaces.md §9).
func TestPrivateBodyChecks(t *testing.T) {
	ps := newPrivateSpace(t)
	for code, v := range ps.bad {
		carrier, member := newPrivatePeer(t, ps.g, nil), newPrivatePeer(t, ps.g, ps.member)
		carrier.admit(ps.honest...)
		member.admit(ps.honest...)
		carrier.expect(v, engine.Stands, "")
		member.expect(v, engine.Refused, code)
	}
	carrier, member := newPrivatePeer(t, ps.g, nil), newPrivatePeer(t, ps.g, ps.member)
	carrier.admit(ps.honest...)
	member.admit(ps.honest...)
	carrier.expect(ps.plain, engine.Refused, seal.CodeShape)
	member.expect(ps.plain, engine.Refused, seal.CodeShape)

	// A member who holds K₀ only (before his box arrived) judges what is
	// sealed under K₁ as a peer without the key does, and what is sealed
	// under K₀ as a member.
	early, _ := seal.NewKeyring(ps.g.ID, ps.k0.ID())
	early.Offer(ps.k0)
	p := newPrivatePeer(t, ps.g, rings{ps.g.ID: early})
	p.admit(ps.honest...)
	p.expect(ps.bad[collection.CodeTagMismatch], engine.Stands, "")
	// The plain SpaceJudge (no private checks) is what the carrier-style
	// judge adds the shape check to.
	plain := newPeer(t, ps.g)
	plain.admit(ps.honest...)
	for _, v := range ps.honest {
		if plain.standing(v.ID) != engine.Stands {
			t.Fatalf("the space judge: %s %s is %v", v.Collection, v.Key, plain.standing(v.ID))
		}
	}
}

// Rival definitions sealed apart: to a peer without the key they are
// definitions it can't read; to a member, the same body is in force and
// different bodies leave the collection contested (02 §6.3).
func TestPrivateRivalDefinitions(t *testing.T) {
	ada, cy := newAccount(t, "ada", true), newAccount(t, "cy", true)
	k0 := seal.NewKey()
	g, err := space.NewGenesis(space.GenesisOptions{Name: "rivals", Private: true, Founders: []string{ada.did, cy.did},
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: t.Name(), EncryptionKeyID: k0.ID()})
	if err != nil {
		t.Fatal(err)
	}
	ring, _ := seal.NewKeyring(g.ID, k0.ID())
	ring.Offer(k0)
	keys := rings{g.ID: ring}
	for _, same := range []bool{true, false} {
		s := &scene{t: t, g: g, atKey: map[string]*record.Version{}}
		define := func(a *account, text string) *record.Version {
			body, _ := canonical.Parse([]byte(text))
			sb, err := seal.SealBody(k0, g.ID, "sys.collection", "collection:app.note", collection.Content{Body: body})
			if err != nil {
				t.Fatal(err)
			}
			return s.write(a, "sys.collection", "collection:app.note", sb, nil)
		}
		da := define(ada, `{"name":"app.note","version":1,"schema":{"type":"object"},"rules":{"final":true}}`)
		other := `{"name":"app.note","version":1,"schema":{"type":"object"},"rules":{"final":true}}`
		if !same {
			other = `{"name":"app.note","version":2,"schema":{"type":"object"}}`
		}
		delete(s.atKey, "collection:app.note") // Cy writes his first, apart
		dc := define(cy, other)
		nk, _ := record.FreshKey(ada.did)
		noteBody, _ := seal.SealBody(k0, g.ID, "app.note", nk, collection.Content{Body: "x"})
		n := s.write(ada, "app.note", nk, noteBody, ids(da, dc))
		carrier, member := newPrivatePeer(t, g, nil), newPrivatePeer(t, g, keys)
		carrier.admit(da, dc)
		member.admit(da, dc)
		carrier.expect(n, engine.Stands, "")
		if same {
			member.expect(n, engine.Stands, "")
			// And final, which only the member reads, binds an edit.
			edit, _ := seal.SealBody(k0, g.ID, "app.note", nk, collection.Content{Body: "y"})
			member.expect(s.write(ada, "app.note", nk, edit, ids(da, dc)), engine.Refused, collection.CodeRuleFinal)
		} else {
			member.expect(n, engine.Refused, space.CodeStandingContested)
		}
	}
}
