package connect_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/space"
)

var ctx = context.Background()

// now is the time tests grant at: the spec's example note's nbf (06 §2.5).
var now = time.Unix(1790022901, 0)

const homeOrigin = "https://home.example"

func newKey(t testing.TB) *identity.PrivateKey {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// specVectors reads the vectors taken from the spec text.
func specVectors(t testing.TB) (code struct {
	Secret string `json:"secret_base64url"`
	Link   string `json:"link_example"`
	Room   string `json:"room"`
}, proof struct {
	Popup string `json:"popup"`
	Code  string `json:"code"`
}) {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Code  json.RawMessage `json:"connect_code_06_3"`
		Proof json.RawMessage `json:"key_proof_06_2_4"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v.Code, &code); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(v.Proof, &proof); err != nil {
		t.Fatal(err)
	}
	return code, proof
}

// isCode reports whether err is a *connect.Refusal with code.
func isCode(err error, code string) bool {
	var r *connect.Refusal
	return errors.As(err, &r) && r.Code == code
}

func wantCode(t testing.TB, err error, code string) {
	t.Helper()
	if !isCode(err, code) {
		t.Fatalf("want refusal %s, got %v", code, err)
	}
}

func parse(t testing.TB, s string) any {
	t.Helper()
	v, err := canonical.Parse([]byte(s))
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

func marshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := canonical.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// account is an account home: the account's root key, the home's session
// key, and its bookkeeping over a MemStore.
type account struct {
	root    *identity.PrivateKey
	session *identity.PrivateKey
	home    *connect.Home
	store   *connect.MemStore
}

func newAccount(t testing.TB) *account {
	t.Helper()
	a := &account{root: newKey(t), session: newKey(t), store: &connect.MemStore{}}
	h, err := connect.NewHome(connect.HomeOptions{Origin: homeOrigin, SessionKey: a.session.DID(), Store: a.store})
	if err != nil {
		t.Fatal(err)
	}
	a.home = h
	return a
}

// app is an app's (or a program's) key and what it asks.
type app struct {
	key    *identity.PrivateKey
	origin string
}

func newApp(t testing.TB, origin string) *app { return &app{key: newKey(t), origin: origin} }

// request makes a request from the app's key with a valid proof; fill
// sets its other members.
func (p *app) request(t testing.TB, access, scope string, fill func(r *connect.ConnectRequest)) *connect.ConnectRequest {
	t.Helper()
	r := &connect.ConnectRequest{Audience: p.key.DID(), Access: access, Scope: scope, ChooseSpaces: true}
	if fill != nil {
		fill(r)
	}
	proof, err := r.KeyProof(homeOrigin).Sign(p.key)
	if err != nil {
		t.Fatal(err)
	}
	r.Proof = proof
	// What the app posts is what the home reads.
	if r.Via == "" {
		back, err := connect.ParseConnectRequest(marshal(t, r.Value()))
		if err != nil {
			t.Fatalf("the app's own request does not read back: %v", err)
		}
		return back
	}
	return r
}

// grant has the home check, grant and remember r from origin, granting
// spaces; it returns the grant as the app reads it.
func (a *account) grant(t testing.TB, r *connect.ConnectRequest, origin string, spaces ...string) *connect.Grant {
	t.Helper()
	if err := a.home.Check(ctx, r, origin); err != nil {
		t.Fatalf("check: %v", err)
	}
	var gs []connect.GrantSpace
	for _, s := range spaces {
		gs = append(gs, connect.GrantSpace{ID: s, Name: "space " + s[:6], Invite: "minca-invite:" + s})
	}
	opts := connect.GrantOptions{Account: a.root, Name: "Leif", Spaces: gs, Now: now}
	if r.Scope == connect.ScopeAccount {
		opts.AccountKey = []byte("account key, 32 bytes long......")
	}
	g, err := connect.IssueGrant(r, opts)
	if err != nil {
		t.Fatalf("issue: %v", err)
	}
	if _, err := a.home.Remember(ctx, r, origin, connect.GrantedBy(g)); err != nil {
		t.Fatalf("remember: %v", err)
	}
	back, err := connect.ParseGrant(marshal(t, g.Value()))
	if err != nil {
		t.Fatalf("the grant does not read back: %v", err)
	}
	return back
}

// spaceID is a made-up space id for n.
func spaceID(n string) string { return canonical.IDOf([]byte(n)).String() }

// carrySpace makes a genesis founded by did: private or public, with a
// role or none.
func carrySpace(t testing.TB, did string, private, roles bool) *space.Genesis {
	t.Helper()
	o := space.GenesisOptions{Name: "carry", Private: private, Founders: []string{did},
		CreatedAt: "2026-01-01T00:00:00.000Z", Nonce: newKey(t).DID()[10:30]}
	if roles {
		o.Roles = map[string][]space.Grant{"reader": {space.MustGrant(identity.CmdRecordRead)}}
	}
	g, err := space.NewGenesis(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
