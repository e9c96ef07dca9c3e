package connect_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/connect"
)

// connect.test.ts: "an app proposing automations" (06 §2.11): a proposal
// reads, the home finds the app's connection and its reach, and refuses
// the whole proposal when one names a space outside it.
func TestConnect_AnAppProposingAutomations(t *testing.T) {
	a := newAccount(t)
	club := "blm7z6wkumdjs43sxki3lv27z5x6qtwa345vmlzjco2mxxau3jmhq"
	chat := newApp(t, "https://chat.example")
	spec := `{ "v": 2, "kind": "propose", "name": "Chat", "automations": [ { "name": "New message in Club", "when": { "query": { "collection": "std.message" }, "others": true }, "spaces": ["` + club + `"] } ] }`
	_, _, err := connect.ParseHomeRequest([]byte(spec), chat.origin)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.home.ProposalReach(ctx, chat.origin)
	wantCode(t, err, connect.CodeHomeNoConn)

	// Connected for the contacts space alone: nothing to reach.
	contacts := spaceID("contacts")
	g := chat.request(t, connect.AccessWrite, connect.ScopeSpaces, func(r *connect.ConnectRequest) { r.Contacts = true })
	if err := a.home.Check(ctx, g, chat.origin); err != nil {
		t.Fatal(err)
	}
	if _, err := a.home.Remember(ctx, g, chat.origin, connect.Granted{Spaces: []string{contacts}, ContactsSpace: contacts}); err != nil {
		t.Fatal(err)
	}
	_, err = a.home.ProposalReach(ctx, chat.origin)
	wantCode(t, err, connect.CodeHomeNoReach)

	a.grant(t, chat.request(t, connect.AccessWrite, connect.ScopeSpaces, nil), chat.origin, club)
	_, p, err := connect.ParseHomeRequest([]byte(spec), chat.origin)
	if err != nil {
		t.Fatal(err)
	}
	reach, err := a.home.ProposalReach(ctx, chat.origin)
	if err != nil || reach.All || !slices.Equal(reach.Spaces, []string{club}) {
		t.Fatalf("%+v %v", reach, err)
	}
	if err := reach.Check(p.Automations); err != nil {
		t.Fatal(err)
	}
	elsewhere := p.Automations[0]
	elsewhere.Spaces = []string{club, spaceID("other")}
	wantCode(t, reach.Check([]connect.Proposal{p.Automations[0], elsewhere}), connect.CodeHomeOutside)
	if s, all := reach.SpacesOf(connect.Proposal{}); all || !slices.Equal(s, []string{club}) {
		t.Fatalf("spaces of a proposal naming none: %v %v", s, all)
	}
	// A program connected by code, and a carrier, are not asked.
	prog := newApp(t, "")
	a.grant(t, prog.request(t, connect.AccessWrite, connect.ScopeAccount, func(r *connect.ConnectRequest) { r.Via, r.RecordsOnly = connect.ViaCode, true }), "")
	_, err = a.home.ProposalReach(ctx, "")
	wantCode(t, err, connect.CodeHomeNoConn)

	// The answer.
	ans := &connect.Proposed{Automations: []connect.ProposedAutomation{{ID: "automation:k3v6mzq4ha2tmbyx", Name: "New message in Club"}}}
	got, err := connect.DecodeProposed(parse(t, string(marshal(t, ans.Value()))))
	if err != nil || len(got.Automations) != 1 || got.Automations[0] != ans.Automations[0] || got.Versions != nil {
		t.Fatalf("%+v %v", got, err)
	}
	if string(marshal(t, ans.Value())) != `{"automations":[{"id":"automation:k3v6mzq4ha2tmbyx","name":"New message in Club"}],"kind":"proposed","v":2}` {
		t.Fatalf("%s", marshal(t, ans.Value()))
	}
}

// topics.test.ts: "a proposal has only the members the home checks" (06
// §2.11): each rule of a ProposeRequest and a Proposal, as a reason code.
func TestConnect_AProposalHasOnlyTheMembersTheHomeChecks(t *testing.T) {
	const origin = "https://chat.example"
	prop := func(p string) string {
		return `{"v":2,"kind":"propose","automations":[` + p + `]}`
	}
	q := func(where string) string {
		return prop(`{"name":"n","when":{"query":{"collection":"app.msg","where":` + where + `}}}`)
	}
	deep := `{"a":1}`
	for i := 0; i < 16; i++ {
		deep = `{"$not":` + deep + `}`
	}
	okDeep := `{"a":1}`
	for i := 0; i < 15; i++ {
		okDeep = `{"$not":` + okDeep + `}`
	}
	for _, c := range []struct{ req, code string }{
		{`{"v":2,"kind":"propose","automations":[],"x":1}`, connect.CodeProposeShape},
		{`{"v":1,"kind":"propose","automations":[]}`, connect.CodeProposeVersion},
		{`{"v":2,"kind":"connect","automations":[]}`, connect.CodeProposeKind},
		{`{"v":2,"kind":"propose","name":7,"automations":[]}`, connect.CodeProposeName},
		{`{"v":2,"kind":"propose","automations":[]}`, connect.CodeProposeCount},
		{prop(strings.Repeat(`{"name":"n","when":{"query":{"collection":"app.msg"}}},`, 8) + `{"name":"n","when":{"query":{"collection":"app.msg"}}}`), connect.CodeProposeCount},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"app":{}}`), connect.CodeProposeShape},
		{prop(`{"name":"  ","when":{"query":{"collection":"app.msg"}}}`), connect.CodeProposeProposal},
		{prop(`{"name":"` + strings.Repeat("n", 121) + `","when":{"query":{"collection":"app.msg"}}}`), connect.CodeProposeProposal},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"},"space":"x"}}`), connect.CodeProposeShape},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"},"others":"yes"}}`), connect.CodeProposeProposal},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg","order":{}}}}`), connect.CodeProposeQuery},
		{prop(`{"name":"n","when":{"query":{"collection":"sys.joined"}}}`), connect.CodeProposeQuery},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"then":{"kind":"email","text":"t"}}`), connect.CodeProposeProposal},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"then":{"kind":"notify","text":" "}}`), connect.CodeProposeProposal},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"spaces":[]}`), connect.CodeProposeProposal},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"spaces":["nope"]}`), connect.CodeProposeProposal},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"open":"https://evil.example/x"}`), connect.CodeProposeProposal},
		{prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"open":"http://chat.example/x"}`), connect.CodeProposeProposal},
		{q(`{"$where":"x"}`), connect.CodeProposeQuery},
		{q(`{"@tags":"x"}`), connect.CodeProposeQuery},
		{q(`{"link:Bad":"x"}`), connect.CodeProposeQuery},
		{q(`{"a..b":1}`), connect.CodeProposeQuery},
		{q(`{"a":{"$gt":1,"b":2}}`), connect.CodeProposeQuery},
		{q(`{"a":{"$regex":"x"}}`), connect.CodeProposeQuery},
		{q(`{"a":{"$in":"x"}}`), connect.CodeProposeQuery},
		{q(`{"a":{"$exists":1}}`), connect.CodeProposeQuery},
		{q(`{"$and":[]}`), connect.CodeProposeQuery},
		{q(`{"$or":{}}`), connect.CodeProposeQuery},
		{q(`[]`), connect.CodeProposeQuery},
		{q(deep), connect.CodeProposeDepth},
	} {
		_, err := connect.DecodeProposeRequest(parse(t, c.req), origin)
		if !isCode(err, c.code) {
			t.Errorf("%s: want %s, got %v", c.req, c.code, err)
		}
	}
	full := prop(`{"name":"Mentions","when":{"query":{"collection":"app.msg","where":{"$or":[{"mentions":{"$contains":"$me"}},{"link:in":"k","@createdBy":{"$ne":"$me"}}],"a.b_c":{"x":1},"@createdAt":{"$gte":1,"$lt":2},"n":{"$in":[1,2],"$exists":true}}},"others":false},"then":{"kind":"notify","text":"You were mentioned"},"spaces":["` + spaceID("s") + `"],"open":"https://chat.example/inbox"}`)
	p, err := connect.DecodeProposeRequest(parse(t, full), origin)
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Automations[0]; a.Others || a.NotifyText != "You were mentioned" || a.Collection != "app.msg" || a.Where == nil || a.Open != "https://chat.example/inbox" {
		t.Fatalf("%+v", a)
	}
	if _, err := connect.DecodeProposeRequest(parse(t, q(okDeep)), origin); err != nil {
		t.Fatalf("16 deep: %v", err)
	}
	if _, err := connect.DecodeProposeRequest(parse(t, prop(`{"name":"n","when":{"query":{"collection":"app.msg"}},"open":"http://localhost:3000/x"}`)), "http://localhost:3000"); err != nil {
		t.Fatalf("http on localhost: %v", err)
	}
}
