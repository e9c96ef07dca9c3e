package accounthome_test

import (
	"github.com/minca-go/minca/carry"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/minca-go/minca/carrier"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
)

// askCarry has a carrier at c's origin ask, the person allow, and returns
// the carry grant the home answers (06 §4.3).
func askCarry(t *testing.T, h *homeT, c *app) *connect.CarryGrant {
	t.Helper()
	var started struct{ ID, Page, Denied string }
	if st := c.ask(h, &connect.ConnectRequest{Audience: c.key.DID(), Access: connect.AccessCarry, Scope: connect.ScopeSpaces, Name: "server"}, &started); st != http.StatusAccepted {
		t.Fatalf("a carrier's request: %d %s", st, started.Denied)
	}
	res, err := http.Get(started.Page)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "asks to carry your account") || !strings.Contains(string(page), c.origin) {
		t.Fatalf("the page does not say a carrier asks:\n%s", page)
	}
	h.do("POST", "/connect/request/"+started.ID, formHeader, form(url.Values{"decision": {"allow"}}), nil)
	ans := c.answer(h, started.ID)
	g, err := connect.DecodeCarryGrant(mustParse(t, ans["grant"]))
	if err != nil {
		t.Fatalf("%v: %s", err, ans)
	}
	return g
}

// carrierRecord is the node's record of the carrier did.
func carrierRecord(t *testing.T, n *node.Node, did string) carry.Carrier {
	t.Helper()
	cs, err := n.Carriers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(cs, func(c carry.Carrier) bool { return c.DID == did })
	if i < 0 {
		t.Fatalf("the node has no carrier %s: %+v", did, cs)
	}
	return cs[i]
}

// The home connects carriers (06 §4.3) through its node (§4.2): allowed,
// the carrier is added and gets a carry grant for its carry space; a new
// carrier from the same origin replaces it, removed from the node too;
// disconnecting a carrier removes it; and revoking an app of scope account
// reaches the carry spaces (06 §2.10).
func TestHomeConnectsCarriers(t *testing.T) {
	h := newHome(t)
	first := newApp(t, "https://carrier.example")
	g := askCarry(t, h, first)
	rec := carrierRecord(t, h.node, first.key.DID())
	if g.DID != h.account.DID() || g.Space != rec.Space || g.Invite == "" || len(g.Relays) != 1 || g.Relays[0] != h.relay || !rec.Live() {
		t.Fatalf("the carry grant %+v; the node's record %+v", g, rec)
	}
	// A carrier takes it (06 §4.3's checks).
	c, err := carrier.Open(ctx, &carrier.Options{Dir: t.TempDir(), Store: "memory:"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Accept(ctx, g); err != nil {
		t.Fatalf("a carrier refuses the carry grant: %v", err)
	}

	second := newApp(t, "https://carrier.example")
	second.key, _ = identity.GenerateKey()
	g2 := askCarry(t, h, second)
	if g2.Space == g.Space || !carrierRecord(t, h.node, second.key.DID()).Live() {
		t.Fatalf("the second carrier's grant %+v", g2)
	}
	if carrierRecord(t, h.node, first.key.DID()).Live() {
		t.Fatal("the carrier the second replaced is still live on the node")
	}

	// Asked for as a program connected by code, the carrier is not
	// disconnected: the answer names what the key is connected as.
	var refused struct{ Code, Message string }
	if st := h.do("POST", "/connections/disconnect", formHeader, form(url.Values{"id": {"code:" + second.key.DID()}}), &refused); st != 404 ||
		!strings.Contains(refused.Message, "connected as carrier:"+second.key.DID()) || !carrierRecord(t, h.node, second.key.DID()).Live() {
		t.Fatalf("disconnecting the carrier as code: %d %+v", st, refused)
	}
	var d struct{ Revoked []struct{ Key string } }
	if st := h.do("POST", "/connections/disconnect", formHeader, form(url.Values{"id": {"carrier:" + second.key.DID()}}), &d); st != 200 || len(d.Revoked) != 0 {
		t.Fatalf("disconnecting the carrier: %d %+v", st, d)
	}
	if carrierRecord(t, h.node, second.key.DID()).Live() {
		t.Fatal("a disconnected carrier is still live on the node")
	}

	// An app of scope account is revoked in the carry spaces too.
	all := newApp(t, "https://all.example")
	var started struct{ ID string }
	if st := all.ask(h, &connect.ConnectRequest{Audience: all.key.DID(), Access: connect.AccessWrite, Scope: connect.ScopeAccount}, &started); st != http.StatusAccepted {
		t.Fatalf("an app of scope account: %d", st)
	}
	h.do("POST", "/connect/request/"+started.ID, formHeader, form(url.Values{"decision": {"allow"}}), nil)
	if _, ok := all.answer(h, started.ID)["grant"]; !ok {
		t.Fatal("the app of scope account was not granted")
	}
	var rd struct {
		Revoked []struct {
			Key    string
			Spaces []string
		}
	}
	if st := h.do("POST", "/connections/disconnect", formHeader, form(url.Values{"id": {"app:" + all.origin}}), &rd); st != 200 || len(rd.Revoked) != 1 {
		t.Fatalf("disconnecting the app: %d %+v", st, rd)
	}
	for _, sp := range []string{g.Space, g2.Space, h.node.Registry()} {
		if !slices.Contains(rd.Revoked[0].Spaces, sp) {
			t.Errorf("the app of scope account is not revoked in %s: %v", sp, rd.Revoked[0].Spaces)
		}
	}
}
