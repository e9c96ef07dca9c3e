package connect_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/identity"
)

// connect.test.ts: "connecting an app to an account home" (06 §2.3–§2.7):
// the request the app posts reads at the home, the grant the home answers
// reads at the app and passes its checks, and the home remembers the
// connection.
func TestConnect_ConnectingAnAppToAnAccountHome(t *testing.T) {
	a := newAccount(t)
	todo := newApp(t, "https://todo.example")
	spaceA := spaceID("todos")
	r := todo.request(t, connect.AccessWrite, connect.ScopeSpaces, func(r *connect.ConnectRequest) {
		r.Name, r.Days = "Todo", 30
	})
	g := a.grant(t, r, todo.origin, spaceA)
	if err := connect.CheckGrant(g, connect.GrantCheck{Audience: todo.key.DID(), Now: now}); err != nil {
		t.Fatalf("the app refuses its own grant: %v", err)
	}
	if g.DID != a.root.DID() || g.Name != "Leif" || g.Access != connect.AccessWrite || g.Scope != connect.ScopeSpaces ||
		len(g.Spaces) != 1 || g.Spaces[0].ID != spaceA || g.AccountKey != nil || g.ContactKey != nil || g.Home != "" {
		t.Fatalf("grant %+v", g)
	}
	if g.ExpiresAt != now.Unix()+30*86400 || g.Note.Exp != g.ExpiresAt || g.Note.Nbf != now.Unix() || g.Note.Meta != nil {
		t.Fatalf("lifetime: expiresAt %d, exp %d, nbf %d", g.ExpiresAt, g.Note.Exp, g.Note.Nbf)
	}
	kept := g.WithHome("https://home.example/connect")
	back, err := connect.ParseGrant(marshal(t, kept.Value()))
	if err != nil || back.Home != "https://home.example/connect" {
		t.Fatalf("kept grant: %v %+v", err, back)
	}
	conns, err := a.home.Connections(ctx)
	if err != nil || len(conns) != 1 {
		t.Fatalf("connections %v %v", conns, err)
	}
	c := conns[0]
	if c.Kind != connect.KindApp || c.Origin != todo.origin || c.Audience != todo.key.DID() || c.Access != connect.AccessWrite ||
		c.Scope != connect.ScopeSpaces || !slices.Equal(c.Spaces, []string{spaceA}) || c.Name != "Todo" || c.ExpiresAt != g.ExpiresAt {
		t.Fatalf("connection %+v", c)
	}
	// The spec's own example request reads (its proof is empty, so the
	// home refuses to grant it).
	req, _, err := connect.ParseHomeRequest([]byte(`{ "v": 1, "audience": "did:key:zDnaeyrPwbZxpDVLsnvAvAEGYazWB2ZrM7QL4Qb1JPzfiYpKy", "proof": "", "name": "Todo", "access": "write", "scope": "spaces", "create": [{ "name": "Todos", "visibility": "private" }], "days": 30 }`), todo.origin)
	if err != nil || req.Name != "Todo" || len(req.Create) != 1 || req.Create[0].Visibility != "private" || req.Days != 30 {
		t.Fatalf("spec example: %v %+v", err, req)
	}
	wantCode(t, a.home.Check(ctx, req, todo.origin), connect.CodeHomeProof)
}

// connect.test.ts: "the app checks the grant" (06 §2.6): v 2, the note
// verifies, its aud is the app's key, its iss the grant's did, and, asked
// for records only, its command under /record.
func TestConnect_TheAppChecksTheGrant(t *testing.T) {
	a := newAccount(t)
	p := newApp(t, "https://todo.example")
	g := a.grant(t, p.request(t, connect.AccessWrite, connect.ScopeAccount, nil), p.origin)
	check := connect.GrantCheck{Audience: p.key.DID(), Now: now}
	if err := connect.CheckGrant(g, check); err != nil {
		t.Fatal(err)
	}
	o := g.Value()
	o.Set("v", float64(1))
	_, err := connect.DecodeGrant(o)
	wantCode(t, err, connect.CodeGrantVersion)

	other := check
	other.Audience = newKey(t).DID()
	wantCode(t, connect.CheckGrant(g, other), connect.CodeGrantAudience)

	g2 := *g
	g2.DID = newKey(t).DID()
	wantCode(t, connect.CheckGrant(&g2, check), connect.CodeGrantIssuer)

	ro := check
	ro.RecordsOnly = true
	wantCode(t, connect.CheckGrant(g, ro), connect.CodeGrantRecordsOnly)

	late := check
	late.Now = time.Unix(g.Note.Exp, 0)
	wantCode(t, connect.CheckGrant(g, late), connect.CodeGrantNote)

	forged := g.Value()
	note := g.Note.Object().Clone()
	payload, _ := note.Get("payload")
	pl := payload.(*canonical.Object).Clone()
	pl.Set("cmd", "/record")
	note.Set("payload", pl)
	forged.Set("note", note)
	fg, err := connect.DecodeGrant(forged)
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, connect.CheckGrant(fg, check), connect.CodeGrantNote)
}

// connect.test.ts: "an app can only ask for a key it holds, and none the
// home already uses for something else" (06 §2.4, §2.5, §2.10).
func TestConnect_AnAppCanOnlyAskForAKeyItHoldsAndNoneTheHomeAlreadyUsesForSomethingElse(t *testing.T) {
	a := newAccount(t)
	todo, mallory := newApp(t, "https://todo.example"), newApp(t, "https://mallory.example")

	// A key it does not hold: the proof is another key's.
	r := todo.request(t, connect.AccessWrite, connect.ScopeSpaces, nil)
	stolen := *r
	stolen.Audience = newKey(t).DID()
	wantCode(t, a.home.Check(ctx, &stolen, todo.origin), connect.CodeHomeProof)

	// A proof made for records only does not ask for more, and back.
	ro := todo.request(t, connect.AccessWrite, connect.ScopeSpaces, func(r *connect.ConnectRequest) { r.RecordsOnly = true })
	more := *ro
	more.RecordsOnly = false
	wantCode(t, a.home.Check(ctx, &more, todo.origin), connect.CodeHomeProof)

	// A program's proof by code is no app's proof, and an app's no
	// program's; and a program's proof for another home is no use here.
	prog := newKey(t)
	codeProof, err := connect.KeyProof{Audience: prog.DID(), RecordsOnly: true, Origin: homeOrigin}.Sign(prog)
	if err != nil {
		t.Fatal(err)
	}
	asApp := &connect.ConnectRequest{Audience: prog.DID(), Proof: codeProof, Access: connect.AccessWrite, Scope: connect.ScopeAccount, RecordsOnly: true}
	wantCode(t, a.home.Check(ctx, asApp, todo.origin), connect.CodeHomeProof)
	appProof, _ := connect.KeyProof{Audience: prog.DID(), RecordsOnly: true}.Sign(prog)
	asCode, _ := connect.NewCodeRequest(prog.DID(), appProof, "agent", 0)
	wantCode(t, a.home.Check(ctx, asCode, ""), connect.CodeHomeProof)
	elsewhere, _ := connect.KeyProof{Audience: prog.DID(), RecordsOnly: true, Origin: "https://other.example"}.Sign(prog)
	atOther, _ := connect.NewCodeRequest(prog.DID(), elsewhere, "agent", 0)
	wantCode(t, a.home.Check(ctx, atOther, ""), connect.CodeHomeProof)
	good, _ := connect.NewCodeRequest(prog.DID(), codeProof, "agent", 0)
	if err := a.home.Check(ctx, good, ""); err != nil {
		t.Fatalf("the program's own proof: %v", err)
	}

	// The home's own session key, even with a proof it made itself.
	own := &app{key: a.session, origin: "https://todo.example"}
	wantCode(t, a.home.Check(ctx, own.request(t, connect.AccessRead, connect.ScopeSpaces, nil), todo.origin), connect.CodeHomeOwnKey)

	// A key another origin holds, or a program by code holds.
	a.grant(t, r, todo.origin)
	theirs := &app{key: todo.key, origin: mallory.origin}
	wantCode(t, a.home.Check(ctx, theirs.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), mallory.origin), connect.CodeHomeKeyHeld)
	a.grant(t, good, "")
	byApp := &app{key: prog, origin: mallory.origin}
	wantCode(t, a.home.Check(ctx, byApp.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), mallory.origin), connect.CodeHomeKeyHeld)
	// And the app at the same origin may ask again with its key.
	if err := a.home.Check(ctx, todo.request(t, connect.AccessRead, connect.ScopeSpaces, nil), todo.origin); err != nil {
		t.Fatalf("the same app again: %v", err)
	}
}

// connect.test.ts: "a request with a field it does not know is refused…"
// (06 §2.4): each MUST of the request, as a reason code.
func TestConnect_ARequestWithAFieldItDoesNotKnowIsRefused(t *testing.T) {
	const aud = `"audience":"did:key:zDnaeyrPwbZxpDVLsnvAvAEGYazWB2ZrM7QL4Qb1JPzfiYpKy","proof":"x"`
	for _, c := range []struct{ req, code, field string }{
		{`{"v":1,` + aud + `,"access":"write","automations":[]}`, connect.CodeRequestShape, "automations"},
		{`{"v":1,` + aud + `,"access":"write","origin":"https://evil.example"}`, connect.CodeRequestShape, "origin"},
		{`[]`, connect.CodeRequestShape, ""},
		{`{"v":2,` + aud + `,"access":"write"}`, connect.CodeRequestVersion, "v"},
		{`{` + aud + `,"access":"write"}`, connect.CodeRequestVersion, "v"},
		{`{"v":1,"audience":"zDnae","proof":"x","access":"write"}`, connect.CodeRequestAudience, "audience"},
		{`{"v":1,"audience":"did:key:z","access":"write"}`, connect.CodeRequestShape, "proof"},
		{`{"v":1,"audience":"did:key:z","proof":7,"access":"write"}`, connect.CodeRequestShape, "proof"},
		{`{"v":1,` + aud + `,"access":"admin"}`, connect.CodeRequestAccess, "access"},
		{`{"v":1,` + aud + `}`, connect.CodeRequestShape, "access"},
		{`{"v":1,` + aud + `,"access":"write","scope":"everything"}`, connect.CodeRequestScope, "scope"},
		{`{"v":1,` + aud + `,"access":"write","name":"` + strings.Repeat("n", 81) + `"}`, connect.CodeRequestName, "name"},
		{`{"v":1,` + aud + `,"access":"write","name":null}`, connect.CodeRequestName, "name"},
		{`{"v":1,` + aud + `,"access":"write","contacts":"yes"}`, connect.CodeRequestShape, "contacts"},
		{`{"v":1,` + aud + `,"access":"write","chooseSpaces":1}`, connect.CodeRequestShape, "chooseSpaces"},
		{`{"v":1,` + aud + `,"access":"write","days":0}`, connect.CodeRequestDays, "days"},
		{`{"v":1,` + aud + `,"access":"write","days":366}`, connect.CodeRequestDays, "days"},
		{`{"v":1,` + aud + `,"access":"write","days":1.5}`, connect.CodeRequestDays, "days"},
		{`{"v":1,` + aud + `,"access":"write","create":[{},{},{},{},{},{},{},{},{}]}`, connect.CodeRequestCreate, "create"},
		{`{"v":1,` + aud + `,"access":"write","create":[{"name":"","visibility":"private"}]}`, connect.CodeRequestCreate, "create[0].name"},
		{`{"v":1,` + aud + `,"access":"write","create":[{"name":"a","visibility":"secret"}]}`, connect.CodeRequestCreate, "create[0].visibility"},
		{`{"v":1,` + aud + `,"access":"write","create":[{"name":"a"}]}`, connect.CodeRequestCreate, "create[0]"},
		{`{"v":1,` + aud + `,"access":"write","create":[{"name":"a","visibility":"public","key":"k"}]}`, connect.CodeRequestCreate, "create[0].key"},
		{`{"v":1,` + aud + `,"access":"write","create":[{"name":"a","visibility":"public","roles":{"Bad":{"grants":[]}}}]}`, connect.CodeRequestCreate, "create[0].roles"},
		{`{"v":1,` + aud + `,"access":"carry","recordsOnly":true}`, connect.CodeRequestRecordsOnly, "recordsOnly"},
		{`{"v":1,` + aud + `,"access":"write","recordsOnly":true,"create":[]}`, connect.CodeRequestRecordsOnly, "create"},
		{`{"v":1,` + aud + `,"access":"write","recordsOnly":true,"contacts":true}`, connect.CodeRequestRecordsOnly, "contacts"},
		{`{"v":1,` + aud + `,"access":"write","via":"code"}`, connect.CodeRequestVia, "via"},
	} {
		_, err := connect.ParseConnectRequest([]byte(c.req))
		var r *connect.Refusal
		if !errors.As(err, &r) || r.Code != c.code || r.Field != c.field {
			t.Errorf("%s: want %s at %q, got %v", c.req, c.code, c.field, err)
		}
	}
	// Everything the table allows, at once, reads.
	ok := `{"v":1,` + aud + `,"name":"Todo","access":"read","scope":"account","create":[{"name":"a","visibility":"public","roles":{"writer":{"grants":[{"cmd":"/record/write"}]}}}],"contacts":false,"chooseSpaces":false,"recordsOnly":false,"days":365}`
	r, err := connect.ParseConnectRequest([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	if r.ChooseSpaces || r.Scope != connect.ScopeAccount || len(r.Create[0].Roles["writer"]) != 1 || r.Days != 365 {
		t.Fatalf("%+v", r)
	}
}

// connect.test.ts: "the grant is a note from the account to the app key,
// for the chosen spaces only" (06 §2.5 step 5, §2.8).
func TestConnect_TheGrantIsANoteFromTheAccountToTheAppKeyForTheChosenSpacesOnly(t *testing.T) {
	a := newAccount(t)
	s1, s2, s3 := spaceID("one"), spaceID("two"), spaceID("three")
	writes := func(n *identity.Note, sp string) bool {
		return n.Grants(&identity.Invocation{Cmd: identity.CmdRecordWrite, Space: sp, Collection: "app.todo"}) == nil
	}
	for _, c := range []struct {
		name   string
		scope  string
		spaces []string
		sub    string
		can    []string
		cannot []string
	}{
		{"none", connect.ScopeSpaces, nil, a.root.DID(), nil, []string{s1, s2}},
		{"one", connect.ScopeSpaces, []string{s2}, identity.SpaceSubject(s2), []string{s2}, []string{s1, s3}},
		{"several", connect.ScopeSpaces, []string{s3, s1}, a.root.DID(), []string{s1, s3}, []string{s2}},
		{"account", connect.ScopeAccount, nil, a.root.DID(), []string{s1, s2, s3}, nil},
	} {
		p := newApp(t, "https://"+c.name+".example")
		g := a.grant(t, p.request(t, connect.AccessWrite, c.scope, nil), p.origin, c.spaces...)
		n := g.Note
		if n.Iss != a.root.DID() || n.Aud != p.key.DID() || n.Sub != c.sub || n.Cmd != identity.CmdTop {
			t.Fatalf("%s: note %+v", c.name, n)
		}
		for _, s := range c.can {
			if !writes(n, s) {
				t.Errorf("%s: the note does not grant writing in %s", c.name, s)
			}
		}
		for _, s := range c.cannot {
			if writes(n, s) {
				t.Errorf("%s: the note grants writing in %s, which was not chosen", c.name, s)
			}
		}
		if (g.AccountKey != nil) != (c.scope == connect.ScopeAccount) {
			t.Errorf("%s: account key %v", c.name, g.AccountKey)
		}
	}
	// Several spaces: the policy names them sorted, as the spec writes it.
	terms, _ := connect.TermsFor(connect.AccessWrite, connect.ScopeSpaces, false, "did:key:zA", []string{"bz", "ba"})
	if got := string(marshal(t, terms.Pol)); got != `[["or",[["==",".space","ba"],["==",".space","bz"]]]]` {
		t.Fatalf("policy %s", got)
	}
	terms, _ = connect.TermsFor(connect.AccessWrite, connect.ScopeSpaces, false, "did:key:zA", nil)
	if got := string(marshal(t, terms.Pol)); got != `[["not",["and",[]]]]` {
		t.Fatalf("policy %s", got)
	}
	for _, c := range []struct {
		access      string
		recordsOnly bool
		cmd         string
	}{{connect.AccessWrite, false, "/"}, {connect.AccessWrite, true, "/record"}, {connect.AccessRead, false, "/record/read"}, {connect.AccessRead, true, "/record/read"}} {
		terms, err := connect.TermsFor(c.access, connect.ScopeAccount, c.recordsOnly, "did:key:zA", nil)
		if err != nil || terms.Cmd != c.cmd {
			t.Errorf("%s recordsOnly %v: cmd %q %v", c.access, c.recordsOnly, terms.Cmd, err)
		}
	}
	if _, err := connect.TermsFor(connect.AccessCarry, connect.ScopeAccount, false, "did:key:zA", nil); err == nil {
		t.Fatal("a carrier got note terms")
	}
	// The lifetime: the person's choice, else the request's, else 7, within
	// the home's bounds.
	p := newApp(t, "https://days.example")
	r := p.request(t, connect.AccessRead, connect.ScopeSpaces, func(r *connect.ConnectRequest) { r.Days = 300 })
	for _, c := range []struct{ chosen, lo, hi, days int }{{0, 0, 0, 300}, {2, 0, 0, 2}, {0, 1, 30, 30}, {1, 5, 30, 5}} {
		g, err := connect.IssueGrant(r, connect.GrantOptions{Account: a.root, Days: c.chosen, MinDays: c.lo, MaxDays: c.hi, Now: now})
		if err != nil || g.ExpiresAt != now.Unix()+int64(c.days)*86400 {
			t.Errorf("%+v: expiresAt %d, want %d days (%v)", c, g.ExpiresAt-now.Unix(), c.days, err)
		}
	}
	r.Days = 0
	g, _ := connect.IssueGrant(r, connect.GrantOptions{Account: a.root, Now: now})
	if g.ExpiresAt != now.Unix()+7*86400 {
		t.Fatalf("default lifetime %d", g.ExpiresAt-now.Unix())
	}
	_, err := connect.IssueGrant(r, connect.GrantOptions{Account: a.root, MinDays: 30, MaxDays: 3})
	wantCode(t, err, connect.CodeHomeLifetime)
}

// connect.test.ts: "disconnecting …" (06 §2.10): disconnecting an app, or a
// program connected by code, revokes the key of the connection removed
// when it had access write, in each space it was granted that the account
// still writes in; a read-only connection revokes nothing; never the home's
// own session key.
func TestConnect_Disconnecting(t *testing.T) {
	a := newAccount(t)
	s1, s2, gone := spaceID("one"), spaceID("two"), spaceID("left")
	writes := connect.AccountWrites{Listed: []string{s1, s2}, Registry: spaceID("registry")}

	w := newApp(t, "https://writer.example")
	a.grant(t, w.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), w.origin, s1, gone)
	rd := newApp(t, "https://reader.example")
	a.grant(t, rd.request(t, connect.AccessRead, connect.ScopeSpaces, nil), rd.origin, s2)

	d, err := a.home.DisconnectApp(ctx, w.origin)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Revoke) != 1 || d.Revoke[0].Key != w.key.DID() || !slices.Equal(d.Revoke[0].Where(writes), []string{s1}) {
		t.Fatalf("revoke %+v", d.Revoke)
	}
	d, err = a.home.DisconnectApp(ctx, rd.origin)
	if err != nil || len(d.Revoke) != 0 {
		t.Fatalf("a read-only app: %+v %v", d, err)
	}
	if _, err := a.home.DisconnectApp(ctx, w.origin); !errors.Is(err, connect.ErrNotConnected) {
		t.Fatalf("disconnecting twice: %v", err)
	}

	// A program connected by code is disconnected by its key.
	prog := newApp(t, "")
	r := prog.request(t, connect.AccessWrite, connect.ScopeAccount, func(r *connect.ConnectRequest) {
		r.Via, r.RecordsOnly = connect.ViaCode, true
	})
	a.grant(t, r, "")
	if _, err := a.home.DisconnectApp(ctx, ""); !errors.Is(err, connect.ErrNotConnected) {
		t.Fatalf("a program by code is no app: %v", err)
	}
	d, err = a.home.DisconnectKey(ctx, prog.key.DID())
	if err != nil || len(d.Revoke) != 1 || !d.Revoke[0].Account || d.Connection.Kind != connect.KindCode {
		t.Fatalf("%+v %v", d, err)
	}

	// The home's own session key is never revoked, even if a connection
	// held it (one remembered before the home's key changed).
	conn := connect.Connection{Kind: connect.KindApp, Origin: "https://old.example", Audience: a.session.DID(),
		Access: connect.AccessWrite, Scope: connect.ScopeAccount}
	if err := a.store.Apply(ctx, []connect.Connection{conn}, nil); err != nil {
		t.Fatal(err)
	}
	d, err = a.home.DisconnectApp(ctx, "https://old.example")
	if err != nil || len(d.Revoke) != 0 {
		t.Fatalf("the home's own key: %+v %v", d, err)
	}
}

// connect.test.ts: "disconnecting a whole-account app revokes it in the
// carry spaces too…" (06 §2.10): scope account reaches wherever the account
// writes — every space it lists, its carry spaces, the contacts space and
// the account registry.
func TestConnect_DisconnectingAWholeAccountAppRevokesItInTheCarrySpacesToo(t *testing.T) {
	a := newAccount(t)
	p := newApp(t, "https://all.example")
	a.grant(t, p.request(t, connect.AccessWrite, connect.ScopeAccount, nil), p.origin)
	writes := connect.AccountWrites{Listed: []string{spaceID("a"), spaceID("b")}, Carry: []string{spaceID("carry")},
		Contacts: spaceID("contacts"), Registry: spaceID("registry")}
	d, err := a.home.DisconnectApp(ctx, p.origin)
	if err != nil || len(d.Revoke) != 1 {
		t.Fatalf("%+v %v", d, err)
	}
	got := d.Revoke[0].Where(writes)
	want := []string{spaceID("a"), spaceID("b"), spaceID("carry"), spaceID("contacts"), spaceID("registry")}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("revoked in %v, want %v", got, want)
	}
}

// connect.test.ts: "connecting again with a new key revokes nothing…" (06
// §2.10): the home keeps each old key that could write, with the scope and
// spaces it was granted, and disconnecting revokes each where it was
// granted; the same key asking again for less keeps its earlier reach.
func TestConnect_ConnectingAgainWithANewKeyRevokesNothing(t *testing.T) {
	a := newAccount(t)
	s1, s2, s3 := spaceID("one"), spaceID("two"), spaceID("three")
	writes := connect.AccountWrites{Listed: []string{s1, s2, s3}}
	first := newApp(t, "https://todo.example")
	a.grant(t, first.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), first.origin, s1)
	second := &app{key: newKey(t), origin: first.origin}
	rem, err := a.home.Remember(ctx, second.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), second.origin, connect.Granted{Spaces: []string{s2}})
	if err != nil || rem.Replaced == nil || rem.Replaced.Audience != first.key.DID() {
		t.Fatalf("%+v %v", rem, err)
	}
	// Nothing to revoke here: Remember names none, and both keys are kept.
	if len(rem.Connection.Replaced) != 1 || rem.Connection.Replaced[0].Key != first.key.DID() {
		t.Fatalf("kept %+v", rem.Connection.Replaced)
	}
	// A third key, read only: the second key, which could write, is kept.
	third := &app{key: newKey(t), origin: first.origin}
	a.grant(t, third.request(t, connect.AccessRead, connect.ScopeSpaces, nil), third.origin, s3)
	// The third asks again for write, then for less: its earlier reach
	// stays (its earlier note still works).
	a.grant(t, third.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), third.origin, s3, s1)
	a.grant(t, third.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), third.origin, s1)
	d, err := a.home.DisconnectApp(ctx, first.origin)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range d.Revoke {
		got[r.Key] = r.Where(writes)
	}
	want := map[string][]string{first.key.DID(): {s1}, second.key.DID(): {s2}, third.key.DID(): sorted(s1, s3)}
	if len(got) != len(want) {
		t.Fatalf("revoked %v, want %v", got, want)
	}
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Fatalf("revoked %v, want %v", got, want)
		}
	}
}

func sorted(s ...string) []string { slices.Sort(s); return s }

// connect.test.ts: "a key a connection replaced is not granted again for
// anything else" (06 §2.10, §2.5).
func TestConnect_AKeyAConnectionReplacedIsNotGrantedAgainForAnythingElse(t *testing.T) {
	a := newAccount(t)
	old := newApp(t, "https://todo.example")
	a.grant(t, old.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), old.origin, spaceID("one"))
	a.grant(t, (&app{key: newKey(t), origin: old.origin}).request(t, connect.AccessWrite, connect.ScopeSpaces, nil), old.origin)
	// The old key, from another origin, as a program by code, or as a
	// carrier: refused.
	elsewhere := &app{key: old.key, origin: "https://other.example"}
	wantCode(t, a.home.Check(ctx, elsewhere.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), elsewhere.origin), connect.CodeHomeKeyHeld)
	byCode := old.request(t, connect.AccessWrite, connect.ScopeAccount, func(r *connect.ConnectRequest) { r.Via, r.RecordsOnly = connect.ViaCode, true })
	wantCode(t, a.home.Check(ctx, byCode, ""), connect.CodeHomeKeyHeld)
	asCarrier := old.request(t, connect.AccessCarry, connect.ScopeSpaces, nil)
	wantCode(t, a.home.Check(ctx, asCarrier, old.origin), connect.CodeHomeOtherKind)
	// Remember refuses it too, so a grant made in a race is never sent.
	_, err := a.home.Remember(ctx, byCode, "", connect.Granted{})
	wantCode(t, err, connect.CodeHomeKeyHeld)
}

// connect.test.ts: "an account home typed by a person" (06 §2.2): a bare
// domain opens /connect over https.
func TestConnect_AnAccountHomeTypedByAPerson(t *testing.T) {
	for _, c := range []struct{ typed, page, origin string }{
		{"minca.example.com", "https://minca.example.com/connect", "https://minca.example.com"},
		{" Minca.Example.com/ ", "https://minca.example.com/connect", "https://minca.example.com"},
		{"http://localhost:8080", "http://localhost:8080/connect", "http://localhost:8080"},
		{"https://home.example:443/sign-in?x=1#y", "https://home.example/sign-in", "https://home.example"},
		{"http://[::1]:9000", "http://[::1]:9000/connect", "http://[::1]:9000"},
	} {
		page, origin, err := connect.ConnectPage(c.typed)
		if err != nil || page != c.page || origin != c.origin {
			t.Errorf("%q: %q %q %v", c.typed, page, origin, err)
		}
	}
	for _, bad := range []string{"ftp://home.example", "https://user@home.example", "https://", "mailto:x@y"} {
		if _, _, err := connect.ConnectPage(bad); err == nil {
			t.Errorf("%q was read as a home", bad)
		}
	}
	for _, o := range []string{"https://home.example", "http://localhost:8080", "http://[::1]:9000"} {
		if _, err := connect.ParseOrigin(o); err != nil {
			t.Errorf("%q: %v", o, err)
		}
	}
	for _, o := range []string{"https://home.example/", "https://Home.example", "https://home.example:443", "https://home.example/connect", "home.example", "https://home.example#", "https://" + strings.Repeat("a", 200) + ".example"} {
		if _, err := connect.ParseOrigin(o); err == nil {
			t.Errorf("%q was read as an origin", o)
		}
	}
}

// connect.test.ts: "the home receiving a request" (06 §2.3 steps 3–4): a
// ConnectRequest and a ProposeRequest are told apart by kind, and a
// malformed one is refused with a reason to answer minca:denied with.
func TestConnect_TheHomeReceivingARequest(t *testing.T) {
	p := newApp(t, "https://todo.example")
	r := p.request(t, connect.AccessWrite, connect.ScopeSpaces, nil)
	cr, pr, err := connect.ParseHomeRequest(marshal(t, r.Value()), p.origin)
	if err != nil || cr == nil || pr != nil || cr.Audience != p.key.DID() {
		t.Fatalf("%+v %+v %v", cr, pr, err)
	}
	for _, bad := range []string{`not json`, `{"v":1}`, `{"kind":"connect"}`, `{"v":1,"audience":"did:key:z","proof":"","access":"write","via":"code"}`} {
		cr, pr, err := connect.ParseHomeRequest([]byte(bad), p.origin)
		var rf *connect.Refusal
		if !errors.As(err, &rf) || cr != nil || pr != nil || rf.Message == "" {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// Every reason code is listed once, in Codes.
func TestCodesAreListedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range connect.Codes() {
		if seen[c] || !strings.Contains(c, "/") {
			t.Fatalf("code %q", c)
		}
		seen[c] = true
	}
}

// Two grants racing for one key, from two origins: one is remembered, the
// other refused (06 §2.5, §2.10). Run under -race.
func TestConnect_TwoGrantsRacingForOneKey(t *testing.T) {
	a := newAccount(t)
	key := newKey(t)
	origins := []string{"https://one.example", "https://two.example", "https://three.example", "https://four.example"}
	reqs := make([]*connect.ConnectRequest, len(origins))
	for i, o := range origins {
		reqs[i] = (&app{key: key, origin: o}).request(t, connect.AccessWrite, connect.ScopeSpaces, nil)
	}
	errs := make(chan error, len(origins))
	for i, o := range origins {
		go func() {
			_, err := a.home.Remember(ctx, reqs[i], o, connect.Granted{})
			errs <- err
		}()
	}
	ok := 0
	for range origins {
		err := <-errs
		switch {
		case err == nil:
			ok++
		case !isCode(err, connect.CodeHomeKeyHeld):
			t.Fatal(err)
		}
	}
	conns, _ := a.home.Connections(ctx)
	if ok != 1 || len(conns) != 1 {
		t.Fatalf("%d remembered, %d kept", ok, len(conns))
	}
}
