package connect_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/identity"
)

// refusedWell fails unless err is a *connect.Refusal with a listed code.
func refusedWell(t *testing.T, err error) {
	t.Helper()
	var r *connect.Refusal
	if !errors.As(err, &r) || !slices.Contains(connect.Codes(), r.Code) || r.Message == "" {
		t.Fatalf("not a refusal with a known code: %v", err)
	}
}

// roundTrip fails unless v's JSON reads back, by read, to the same JSON.
func roundTrip[T any](t *testing.T, value func(T) *canonical.Object, read func([]byte) (T, error), v T) {
	t.Helper()
	a, err := canonical.Marshal(value(v))
	if err != nil {
		t.Fatal(err)
	}
	back, err := read(a)
	if err != nil {
		t.Fatalf("%s does not read back: %v", a, err)
	}
	b, _ := canonical.Marshal(value(back))
	if !bytes.Equal(a, b) {
		t.Fatalf("%s reads back as %s", a, b)
	}
}

// FuzzHomeRequest: anything an app posts is a ConnectRequest or a
// ProposeRequest that re-encodes to itself, or a refusal with a known code.
func FuzzHomeRequest(f *testing.F) {
	f.Add([]byte(`{ "v": 1, "audience": "did:key:zDnaeyrPwbZxpDVLsnvAvAEGYazWB2ZrM7QL4Qb1JPzfiYpKy", "proof": "", "name": "Todo", "access": "write", "scope": "spaces", "create": [{ "name": "Todos", "visibility": "private" }], "days": 30 }`))
	f.Add([]byte(`{"v":1,"audience":"did:key:z","proof":"p","access":"read","scope":"account","contacts":true,"chooseSpaces":false,"create":[{"name":"a","visibility":"public","roles":{"writer":{"grants":[{"cmd":"/record/write","pol":[["==",".collection","app.x"]]}]}}}]}`))
	f.Add([]byte(`{"v":1,"audience":"did:key:z","proof":"p","access":"write","recordsOnly":true,"via":"code"}`))
	f.Add([]byte(`{ "v": 2, "kind": "propose", "name": "Chat", "automations": [ { "name": "New message in Club", "when": { "query": { "collection": "std.message" }, "others": true }, "spaces": ["blm7z6wkumdjs43sxki3lv27z5x6qtwa345vmlzjco2mxxau3jmhq"] } ] }`))
	f.Add([]byte(`{"v":2,"kind":"propose","automations":[{"name":"n","when":{"query":{"collection":"app.msg","where":{"$or":[{"a.b":{"$in":[1,"$me"]}},{"$not":{"link:in":"k"}}],"@createdAt":{"$gte":1}}}},"then":{"kind":"notify","text":"t"},"open":"https://chat.example/x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const origin = "https://chat.example"
		r, p, err := connect.ParseHomeRequest(data, origin)
		switch {
		case err != nil:
			refusedWell(t, err)
		case r != nil:
			roundTrip(t, (*connect.ConnectRequest).Value, connect.ParseConnectRequest, r)
			r.KeyProof(origin).Check(r.Proof)
		case p != nil:
			for _, a := range p.Automations {
				if a.Where != nil {
					if _, err := canonical.Marshal(a.Where); err != nil {
						t.Fatal(err)
					}
				}
			}
		default:
			t.Fatal("neither a request nor a refusal")
		}
	})
}

// FuzzGrant: anything read as a grant re-encodes to itself, and survives
// the app's checks; else it is refused with a known code.
func FuzzGrant(f *testing.F) {
	root, _ := identity.GenerateKey()
	app, _ := identity.GenerateKey()
	r := &connect.ConnectRequest{Audience: app.DID(), Access: connect.AccessWrite, Scope: connect.ScopeSpaces}
	g, err := connect.IssueGrant(r, connect.GrantOptions{Account: root, Name: "Leif", Now: now, Relays: []string{"wss://r.example"},
		Spaces: []connect.GrantSpace{{ID: "b1", Name: "one", Invite: "i", MemberKey: []byte{1, 2}}, {ID: "b2", Name: "two", Invite: "j"}}})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := canonical.Marshal(g.WithHome("https://home.example/connect").Value())
	f.Add(b)
	f.Add([]byte(`{ "v": 2, "did": "did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E", "name": "Leif", "note": { "payload": { "aud": "did:key:zDnaeyrPwbZxpDVLsnvAvAEGYazWB2ZrM7QL4Qb1JPzfiYpKy", "cmd": "/", "exp": 1792614901, "iss": "did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E", "nbf": 1790022901, "nonce": "pr0q7Vm5c2T8xkWa", "pol": [], "sub": "space:blm7z6…" }, "sig": "…", "type": "minca/ucan/dlg@1" }, "access": "write", "scope": "spaces", "spaces": [{ "id": "blm7z6…", "name": "Todos", "invite": "…", "memberKey": "q0v" }], "relays": ["wss://relay.minca.social"], "expiresAt": 1792614901 }`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := connect.ParseGrant(data)
		if err != nil {
			refusedWell(t, err)
			return
		}
		roundTrip(t, (*connect.Grant).Value, connect.ParseGrant, g)
		if err := connect.CheckGrant(g, connect.GrantCheck{Audience: app.DID(), RecordsOnly: true, Now: time.Unix(1790022901, 0)}); err != nil {
			refusedWell(t, err)
		}
	})
}

// FuzzCarryGrant: anything read as a carry grant re-encodes to itself and
// survives the carrier's checks.
func FuzzCarryGrant(f *testing.F) {
	f.Add([]byte(`{ "v": 1, "kind": "carry", "did": "", "name": "Leif", "carry": { "space": "", "invite": "" }, "pod": { "dataPath": "accounts/k3j2h4g5f6d7/stores", "folder": "Minca" }, "relays": ["wss://…"] }`))
	f.Add([]byte(`{"v":1,"kind":"carry","did":"d","name":"n","carry":{"space":"s","invite":"i"},"pod":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := connect.ParseCarryGrant(data)
		if err != nil {
			refusedWell(t, err)
			return
		}
		roundTrip(t, (*connect.CarryGrant).Value, connect.ParseCarryGrant, g)
		err = connect.CheckCarryGrant(g, func(string) (connect.CarryInvite, error) { return connect.CarryInvite{}, errors.New("no") })
		refusedWell(t, err)
	})
}

// FuzzProposed: the answer to a proposal reads, re-encoding to itself, or
// is refused with a known code.
func FuzzProposed(f *testing.F) {
	f.Add([]byte(`{ "v": 2, "kind": "proposed", "automations": [{ "id": "automation:k3v6mzq4ha2tmbyx", "name": "New message in Club" }] }`))
	f.Add([]byte(`{"v":2,"kind":"proposed","automations":[],"versions":[{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := canonical.Parse(data)
		if err != nil {
			return
		}
		p, err := connect.DecodeProposed(v)
		if err != nil {
			refusedWell(t, err)
			return
		}
		roundTrip(t, (*connect.Proposed).Value, func(b []byte) (*connect.Proposed, error) {
			v, err := canonical.Parse(b)
			if err != nil {
				return nil, err
			}
			return connect.DecodeProposed(v)
		}, p)
	})
}

// FuzzCodeIn: a code read from any text reads back from its own text.
func FuzzCodeIn(f *testing.F) {
	f.Add("https://home.example/connect#mc_eYV4XGMvhkky6OWpPfqfRQ")
	f.Add("mc_mc_eYV4XGMvhkky6OWpPfqfRQ")
	f.Add("mc_eYV4XGMvhkky6OWpPfqfRQA mc_eYV4XGMvhkky6OWpPfqfRR")
	f.Fuzz(func(t *testing.T, text string) {
		c, err := connect.CodeIn(text)
		if err != nil {
			refusedWell(t, err)
			return
		}
		back, err := connect.CodeIn(c.String())
		if err != nil || back != c || len(c.Room()) != canonical.IDLen {
			t.Fatalf("%s: %v", c, err)
		}
	})
}

// FuzzCodeMessages: any message, at any point of an exchange, on either
// side, is taken or ignored with a refusal of a known code; never a panic.
func FuzzCodeMessages(f *testing.F) {
	s := newScene(f)
	p, h := s.program(s.progKey), s.homeSide()
	hello := p.Joined("home")[0].Message
	key, _ := h.Receive("program", hello)
	point, _ := p.Receive("home", key[0].Message)
	home, _ := h.Receive("program", point[0].Message)
	ask, _ := p.Receive("home", home[0].Message)
	heard, _ := h.Receive("program", ask[0].Message)
	for _, m := range [][]byte{hello, key[0].Message, point[0].Message, home[0].Message, ask[0].Message, heard[0].Message,
		[]byte(`{"type":"code:answer","from":null,"payload":"AAAAAA"}`), []byte(`{"type":"code:done","from":null,"payload":"AAAAAQ"}`)} {
		for stage := byte(0); stage < 4; stage++ {
			f.Add(stage, m)
		}
	}
	f.Fuzz(func(t *testing.T, stage byte, data []byte) {
		s := newScene(t)
		p, h := s.program(s.progKey), s.homeSide()
		// Bring both sides to the stage, then hand each the message.
		steps := []func(){
			func() {},
			func() {
				k, _ := h.Receive("program", p.Joined("home")[0].Message)
				pt, _ := p.Receive("home", k[0].Message)
				h.Receive("program", pt[0].Message)
			},
			func() { direct(t, p, h) },
			func() {
				a := direct(t, p, h)
				g, err := s.a.home.GrantCode(ctx, a, connect.GrantOptions{Account: s.a.root, Now: now})
				if err != nil {
					t.Fatal(err)
				}
				h.Answer(g)
			},
		}
		steps[int(stage)%len(steps)]()
		for _, side := range []func(string, []byte) ([]connect.Send, error){p.Receive, h.Receive} {
			for _, peer := range []string{"home", "program", "other"} {
				if _, err := side(peer, data); err != nil {
					refusedWell(t, err)
				}
			}
		}
	})
}
