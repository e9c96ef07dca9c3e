package connect_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/judge"
	"github.com/minca-go/minca/judge/judgetest"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// peer is a store with the node's full judge, holding one space: what
// every peer does with a version.
type peer struct {
	t  testing.TB
	st *engine.Store
}

func newPeer(t testing.TB, g *space.Genesis) *peer {
	t.Helper()
	return &peer{t: t, st: judgetest.Store(t, judge.NewSpaceJudge(&identity.Checker{}), g, nil)}
}

func (p *peer) expect(v *record.Version, verdict engine.Verdict, code string) {
	p.t.Helper()
	outs, err := p.st.Admit(ctx, "test", []*record.Version{v})
	if err != nil {
		p.t.Fatal(err)
	}
	got := ""
	if outs[0].Refusal != nil {
		got = outs[0].Refusal.Code
	}
	if outs[0].Verdict != verdict || got != code {
		p.t.Fatalf("%s %s: %v %q, want %v %q", v.Collection, v.Key, outs[0].Verdict, got, verdict, code)
	}
}

// writer signs versions in one space, keeping each key's last version and
// each collection's log.
type writer struct {
	t     testing.TB
	g     *space.Genesis
	s     identity.Signer
	root  string
	atKey map[string]*record.Version
	logs  map[string]*record.Version
	clock int
}

func newWriter(t testing.TB, g *space.Genesis, s identity.Signer, root string) *writer {
	return &writer{t: t, g: g, s: s, root: root, atKey: map[string]*record.Version{}, logs: map[string]*record.Version{}}
}

func (w *writer) write(coll, key string, body any) *record.Version {
	w.t.Helper()
	w.clock++
	d := &record.Draft{Space: w.g.ID, Collection: coll, CreatedAt: time.Date(2026, 1, 1, 0, 0, w.clock, 0, time.UTC), Key: key,
		After: w.atKey[key], Log: record.LogAfter(w.logs[coll]), Retain: space.IsAccessCollection(coll), Deleted: body == nil, Body: body}
	v, err := d.Sign(w.s)
	if err != nil {
		w.t.Fatal(err)
	}
	w.atKey[key], w.logs[coll] = v, v
	return v
}

func (w *writer) fresh(coll string, body any) *record.Version {
	w.t.Helper()
	key, err := record.FreshKey(w.root)
	if err != nil {
		w.t.Fatal(err)
	}
	return w.write(coll, key, body)
}

// program connects a program's key by code at a's home (06 §3) and
// returns a signer under the note it was granted.
func programOf(t testing.TB, a *account, days int) (*identity.SessionSigner, *connect.Grant) {
	t.Helper()
	key := newKey(t)
	proof, err := connect.KeyProof{Audience: key.DID(), RecordsOnly: true, Origin: homeOrigin}.Sign(key)
	if err != nil {
		t.Fatal(err)
	}
	r, err := connect.NewCodeRequest(key.DID(), proof, "agent", days)
	if err != nil {
		t.Fatal(err)
	}
	g := a.grant(t, r, "")
	if err := connect.CheckGrant(g, connect.GrantCheck{Audience: key.DID(), RecordsOnly: true, Now: now}); err != nil {
		t.Fatal(err)
	}
	s, err := identity.NewSessionSigner(key, g.Note)
	if err != nil {
		t.Fatal(err)
	}
	return s, g
}

func accountSpace(t testing.TB, did string, account bool) *space.Genesis {
	t.Helper()
	g, err := space.NewGenesis(space.GenesisOptions{Name: "s", Founders: []string{did}, Account: account,
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: newKey(t).DID()[10:30]})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// records-only.test.ts: "a definition signed by hand under a records-only
// note is ignored by every peer" (06 §2.8): a records-only note never
// changes a space's collections or who may do what.
func TestRecordsOnly_ADefinitionSignedByHandUnderARecordsOnlyNoteIsIgnoredByEveryPeer(t *testing.T) {
	a := newAccount(t)
	g := accountSpace(t, a.root.DID(), false)
	prog, _ := programOf(t, a, 0)
	w := newWriter(t, g, prog, a.root.DID())
	p := newPeer(t, g)
	def := canonical.NewObject("name", "app.todo", "version", float64(1), "schema", canonical.NewObject("type", "object"))
	p.expect(w.write("sys.collection", "collection:app.todo", def), engine.Refused, identity.CodeNoteCommand)
	other := newKey(t).DID()
	p.expect(w.write("sys.assign", "member:"+record.OwnerPart(other), canonical.NewObject("member", other, "roles", []any{})), engine.Refused, identity.CodeNoteCommand)
	p.expect(w.write("sys.role", "role:writer", canonical.NewObject("name", "writer", "grants", []any{})), engine.Refused, identity.CodeNoteCommand)
	// What it may write, it writes.
	p.expect(w.fresh("app.todo", canonical.NewObject("text", "Buy milk")), engine.Stands, "")
}

// records-only.test.ts: "what counts is what the note grants" (06 §2.5
// step 5, §2.8): records only writes and deletes records; read grants no
// writing at all; write grants everything.
func TestRecordsOnly_WhatCountsIsWhatTheNoteGrants(t *testing.T) {
	a := newAccount(t)
	g := accountSpace(t, a.root.DID(), false)
	p := newPeer(t, g)
	prog, _ := programOf(t, a, 0)
	w := newWriter(t, g, prog, a.root.DID())
	v := w.fresh("app.todo", canonical.NewObject("text", "a"))
	p.expect(v, engine.Stands, "")
	p.expect(w.write("app.todo", v.Key, nil), engine.Stands, "")

	reader := newApp(t, "https://reader.example")
	rg := a.grant(t, reader.request(t, connect.AccessRead, connect.ScopeAccount, nil), reader.origin)
	rs, err := identity.NewSessionSigner(reader.key, rg.Note)
	if err != nil {
		t.Fatal(err)
	}
	p.expect(newWriter(t, g, rs, a.root.DID()).fresh("app.todo", canonical.NewObject("text", "b")), engine.Refused, identity.CodeNoteCommand)

	full := newApp(t, "https://full.example")
	fg := a.grant(t, full.request(t, connect.AccessWrite, connect.ScopeAccount, nil), full.origin)
	fs, _ := identity.NewSessionSigner(full.key, fg.Note)
	def := canonical.NewObject("name", "app.todo", "version", float64(1), "schema", canonical.NewObject("type", "object"))
	p.expect(newWriter(t, g, fs, a.root.DID()).write("sys.collection", "collection:app.todo", def), engine.Stands, "")
}

// records-only.test.ts: "it never writes the account itself…" (06 §2.8,
// §1.3): a records-only grant carries no contact key, a home will not give
// it one, and its note does not grant /account/write.
func TestRecordsOnly_ItNeverWritesTheAccountItself(t *testing.T) {
	a := newAccount(t)
	_, g := programOf(t, a, 0)
	if g.ContactKey != nil {
		t.Fatal("a records-only grant carries the contact key")
	}
	if err := g.Note.Grants(&identity.Invocation{Cmd: identity.CmdAccountWrite, Space: spaceID("registry"), Collection: "sys.joined"}); err == nil {
		t.Fatal("a records-only note grants /account/write")
	}
	p := newApp(t, "https://app.example")
	r := p.request(t, connect.AccessWrite, connect.ScopeAccount, func(r *connect.ConnectRequest) { r.RecordsOnly = true })
	_, err := connect.IssueGrant(r, connect.GrantOptions{Account: a.root, ContactKey: []byte("contact key"), Now: now})
	wantCode(t, err, connect.CodeHomeRecordsOnly)
	// Nor is a program by code granted more than records, whatever the
	// request the home was handed says.
	byCode, _ := connect.NewCodeRequest(p.key.DID(), "x", "agent", 0)
	byCode.RecordsOnly = false
	_, err = connect.IssueGrant(byCode, connect.GrantOptions{Account: a.root, Now: now})
	wantCode(t, err, connect.CodeHomeRecordsOnly)
}

// records-only.test.ts: "in the account's own spaces, a version under a
// records-only note does not stand" (06 §1.3, 02 §9.4 step 2).
func TestRecordsOnly_InTheAccountsOwnSpacesAVersionUnderARecordsOnlyNoteDoesNotStand(t *testing.T) {
	a := newAccount(t)
	registry := accountSpace(t, a.root.DID(), true)
	p := newPeer(t, registry)
	prog, _ := programOf(t, a, 0)
	w := newWriter(t, registry, prog, a.root.DID())
	p.expect(w.write("sys.joined", "space:"+spaceID("x"), canonical.NewObject("space", spaceID("x"))), engine.Refused, space.CodeStandingAccount)
	// The account's own session, under a note for everything, writes there.
	session := newKey(t)
	n, err := identity.IssueNote(a.root, identity.NoteOptions{Aud: session.DID(), Cmd: identity.CmdTop})
	if err != nil {
		t.Fatal(err)
	}
	own, _ := identity.NewSessionSigner(session, n)
	p.expect(newWriter(t, registry, own, a.root.DID()).write("sys.joined", "space:"+spaceID("y"), canonical.NewObject("space", spaceID("y"))), engine.Stands, "")
}

// records-only.test.ts: "a program on a computer gets the whole account,
// records only, for as long as asked; each is its own connection" (06 §3,
// §2.10).
func TestRecordsOnly_AProgramOnAComputerGetsTheWholeAccountRecordsOnlyForAsLongAsAsked(t *testing.T) {
	a := newAccount(t)
	s1, g1 := programOf(t, a, 90)
	s2, g2 := programOf(t, a, 0)
	for _, g := range []*connect.Grant{g1, g2} {
		if g.Note.Sub != a.root.DID() || g.Note.Cmd != identity.CmdRecord || g.Scope != connect.ScopeAccount || g.AccountKey == nil {
			t.Fatalf("%+v", g.Note)
		}
	}
	if g1.ExpiresAt != now.Unix()+90*86400 || g2.ExpiresAt != now.Unix()+7*86400 {
		t.Fatalf("lifetimes %d %d", g1.ExpiresAt-now.Unix(), g2.ExpiresAt-now.Unix())
	}
	conns, _ := a.home.Connections(ctx)
	if len(conns) != 2 || conns[0].Kind != connect.KindCode || conns[1].Kind != connect.KindCode {
		t.Fatalf("%+v", conns)
	}
	d, err := a.home.DisconnectKey(ctx, s1.DID())
	if err != nil || len(d.Revoke) != 1 || d.Revoke[0].Key != s1.DID() {
		t.Fatalf("%+v %v", d, err)
	}
	conns, _ = a.home.Connections(ctx)
	if len(conns) != 1 || conns[0].Audience != s2.DID() {
		t.Fatalf("%+v", conns)
	}

	// By code, over a room: two programs, two connections, each its key's.
	overRelays(t, func(t *testing.T, kind string) {
		s := newSceneOver(t, kind)
		var keys []string
		for i := 0; i < 2; i++ {
			if i > 0 {
				code, err := connect.NewCode()
				if err != nil {
					t.Fatal(err)
				}
				s.code, s.progKey = code, newKey(t)
			}
			r := s.connectOnce()
			if r.progErr != nil || r.homeErr != nil || r.grant == nil {
				t.Fatalf("%+v", r)
			}
			g := r.grant
			if g.Note.Aud != s.progKey.DID() || g.Note.Sub != s.a.root.DID() || g.Note.Cmd != identity.CmdRecord || g.Scope != connect.ScopeAccount || g.ExpiresAt != now.Unix()+7*86400 {
				t.Fatalf("%+v", g.Note)
			}
			keys = append(keys, s.progKey.DID())
		}
		conns, _ := s.a.home.Connections(ctx)
		var got []string
		for _, c := range conns {
			if c.Kind != connect.KindCode {
				t.Fatalf("%+v", c)
			}
			got = append(got, c.Audience)
		}
		slices.Sort(keys)
		slices.Sort(got)
		if !slices.Equal(got, keys) {
			t.Fatalf("connections %v, want %v", got, keys)
		}
	})
}

// records-only.test.ts: "over a code: the program learns the home's origin,
// and its proof is refused at any other" (06 §2.4, §3).
func TestRecordsOnly_OverACodeTheProgramLearnsTheHomesOriginAndItsProofIsRefusedAtAnyOther(t *testing.T) {
	_, vec := specVectors(t)
	st, err := connect.KeyProof{Audience: "did:key:zDnaeyrPwbZxpDVLsnvAvAEGYazWB2ZrM7QL4Qb1JPzfiYpKy", RecordsOnly: true, Origin: "https://home.example"}.Statement()
	if err != nil || string(st) != vec.Code {
		t.Fatalf("statement %s, want %s", st, vec.Code)
	}
	st, err = connect.KeyProof{Audience: "did:key:zDnaeyrPwbZxpDVLsnvAvAEGYazWB2ZrM7QL4Qb1JPzfiYpKy"}.Statement()
	if err != nil || string(st) != vec.Popup {
		t.Fatalf("statement %s, want %s", st, vec.Popup)
	}
	key := newKey(t)
	proof, err := connect.KeyProof{Audience: key.DID(), RecordsOnly: true, Origin: homeOrigin}.Sign(key)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := connect.NewCodeRequest(key.DID(), proof, "agent", 0)
	other := newAccount(t)
	h, err := connect.NewHome(connect.HomeOptions{Origin: "https://other.example", SessionKey: other.session.DID(), Store: other.store})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, h.Check(ctx, r, ""), connect.CodeHomeProof)
	if err := newAccount(t).home.Check(ctx, r, ""); err != nil {
		t.Fatalf("at the home it named: %v", err)
	}

	// Over a room: the program asks with a proof naming the origin the
	// home said, which another home refuses.
	overRelays(t, func(t *testing.T, kind string) {
		s := newSceneOver(t, kind)
		shown := make(chan string, 1)
		var asked connect.Ask
		allow := s.allow(shown)
		res := s.run(s.program(s.progKey), s.homeSide(), func(c context.Context, ask connect.Ask) (connect.Decision, error) {
			asked = ask
			return allow(c, ask)
		}, person(shown))
		if res.progErr != nil || res.homeErr != nil || asked.DID != s.progKey.DID() {
			t.Fatalf("%+v", res)
		}
		if err := (connect.KeyProof{Audience: asked.DID, RecordsOnly: true, Origin: homeOrigin}).Check(asked.Proof); err != nil {
			t.Fatalf("the proof does not name the home's origin: %v", err)
		}
		r, err := connect.NewCodeRequest(asked.DID, asked.Proof, asked.Name, 0)
		if err != nil {
			t.Fatal(err)
		}
		wantCode(t, h.Check(ctx, r, ""), connect.CodeHomeProof)
	})
}
