package accounthome_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minca-go/minca/accounthome"
	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/connect"
	"github.com/minca-go/minca/connect/relayroom"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/transport/transporttest"
)

var ctx = context.Background()

// homeT is a home on a loopback port, its account's node in memory, and
// the relay programs meet it on.
type homeT struct {
	t       *testing.T
	srv     *accounthome.Server
	url     string
	account *identity.PrivateKey
	node    *node.Node
	relay   string
	dir     string
}

func newHome(t *testing.T) *homeT { return newHomeWith(t, nil) }

// newHomeWith is a home whose options tune changes.
func newHomeWith(t *testing.T, tune func(*accounthome.Options)) *homeT {
	t.Helper()
	dir := t.TempDir()
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if err := identity.WriteKeyFile(filepath.Join(dir, node.AccountKeyName), acc); err != nil {
		t.Fatal(err)
	}
	n, err := node.Open(ctx, &node.Options{Dir: dir, Store: "memory:"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	relay := transporttest.StartRelay(t, nil)
	o := &accounthome.Options{Node: n, Account: acc, Name: "Leif", Relay: relay.URL(), Wait: 5 * time.Second}
	if tune != nil {
		tune(o)
	}
	s, err := accounthome.New(o)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() { hs.Close(); s.Close() })
	return &homeT{t: t, srv: s, url: hs.URL, account: acc, node: n, relay: relay.URL(), dir: dir}
}

// do makes a request and decodes its JSON answer; it returns the status.
func (h *homeT) do(method, path string, header map[string]string, body io.Reader, out any) int {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url+path, body)
	if err != nil {
		h.t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			h.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
		}
	}
	return res.StatusCode
}

func form(v url.Values) io.Reader { return strings.NewReader(v.Encode()) }

var formHeader = map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}

// app is an app's page at origin, with its key.
type app struct {
	origin string
	key    *identity.PrivateKey
}

func newApp(t *testing.T, origin string) *app {
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return &app{origin: origin, key: k}
}

// ask posts a request as the app's page does, its proof for the home at
// homeOrigin, and returns the status and the answer.
func (a *app) ask(h *homeT, r *connect.ConnectRequest, out any) int {
	h.t.Helper()
	proof, err := r.KeyProof("").Sign(a.key)
	if err != nil {
		h.t.Fatal(err)
	}
	r.Proof = proof
	b, _ := canonical.Marshal(canonical.NewObject("request", r.Value()))
	return h.do("POST", "/connect/request", map[string]string{"Origin": a.origin, "Content-Type": "application/json"}, bytes.NewReader(b), out)
}

// answer polls the app's answer until it is not waiting.
func (a *app) answer(h *homeT, id string) map[string]json.RawMessage {
	h.t.Helper()
	for i := 0; i < 200; i++ {
		var m map[string]json.RawMessage
		h.do("GET", "/connect/request/"+id, map[string]string{"Origin": a.origin}, nil, &m)
		if _, waiting := m["state"]; !waiting {
			return m
		}
		time.Sleep(20 * time.Millisecond)
	}
	h.t.Fatal("no answer")
	return nil
}

// connect.test.ts: "connecting an app to an account home" (06 §2.3–§2.7),
// at this home over HTTP: the app's request waits for the person at the
// page, which shows the app's origin; Allow makes the space asked for,
// signs the note, and the grant passes the app's checks; the home keeps
// the connection.
func TestConnect_ConnectingAnAppToAnAccountHome(t *testing.T) {
	h := newHome(t)
	todo := newApp(t, "https://todo.example")
	r := &connect.ConnectRequest{Audience: todo.key.DID(), Access: connect.AccessWrite, Scope: connect.ScopeSpaces, Name: "Todo", Days: 30,
		Create: []connect.NewSpace{{Name: "Todos", Visibility: "public"}}}
	var started struct{ ID, Page string }
	if st := todo.ask(h, r, &started); st != http.StatusAccepted || !strings.HasPrefix(started.Page, h.url+"/connect?request=") {
		t.Fatalf("%d %+v", st, started)
	}
	res, err := http.Get(started.Page)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{"https://todo.example", "Todo", "“Todos”", `value="allow"`, "30 days"} {
		if !bytes.Contains(page, []byte(want)) {
			t.Fatalf("the page does not show %q:\n%s", want, page)
		}
	}
	var v struct{ State string }
	if st := h.do("POST", "/connect/request/"+started.ID, formHeader, form(url.Values{"decision": {"allow"}}), &v); st != 200 || v.State != "granted" {
		t.Fatalf("allow: %d %+v", st, v)
	}
	ans := todo.answer(h, started.ID)
	g, err := connect.DecodeGrant(mustParse(t, ans["grant"]))
	if err != nil {
		t.Fatalf("%v: %s", err, ans["grant"])
	}
	if err := connect.CheckGrant(g, connect.GrantCheck{Audience: todo.key.DID(), Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if g.DID != h.account.DID() || g.Name != "Leif" || len(g.Spaces) != 1 || g.Spaces[0].Name != "Todos" || g.Spaces[0].Invite == "" ||
		g.Note.Sub != "space:"+g.Spaces[0].ID || g.Note.Cmd != "/" || len(g.Relays) != 1 || g.Relays[0] != h.relay {
		t.Fatalf("grant %+v", g)
	}
	sps, err := h.node.Spaces(ctx)
	if err != nil || !containsSpace(sps, g.Spaces[0].ID) {
		t.Fatalf("the home's node does not keep the space made: %v %v", sps, err)
	}
	var list struct {
		Connections []struct{ ID, Kind, Origin, Audience string }
	}
	h.do("GET", "/connections", map[string]string{"Accept": "application/json"}, nil, &list)
	if len(list.Connections) != 1 || list.Connections[0].Kind != "app" || list.Connections[0].Origin != todo.origin || list.Connections[0].Audience != todo.key.DID() {
		t.Fatalf("%+v", list)
	}
	// Another origin cannot read the answer.
	var other map[string]any
	if st := h.do("GET", "/connect/request/"+started.ID, map[string]string{"Origin": "https://evil.example"}, nil, &other); st != http.StatusNotFound {
		t.Fatalf("another origin read the answer: %d %v", st, other)
	}
}

func containsSpace(sps []node.SpaceInfo, id string) bool {
	for _, s := range sps {
		if s.ID == id {
			return true
		}
	}
	return false
}

func mustParse(t *testing.T, b []byte) any {
	t.Helper()
	v, err := canonical.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// connect.test.ts: "the home receiving a request" (06 §2.3 steps 3–4): the
// app is the origin its browser names, never a name in the request; a
// request out of shape is answered "did not understand"; one whose proof
// is not the key's is refused; the person saying no reaches the app.
func TestConnect_TheHomeReceivingARequest(t *testing.T) {
	h := newHome(t)
	todo := newApp(t, "https://todo.example")
	var d struct{ Denied string }
	if st := h.do("POST", "/connect/request", map[string]string{"Origin": todo.origin}, strings.NewReader(`{"request":{"v":1,"audience":"did:key:x","access":"write","extra":1}}`), &d); st != 400 || !strings.Contains(d.Denied, "did not understand") {
		t.Fatalf("%d %+v", st, d)
	}
	if st := h.do("POST", "/connect/request", nil, strings.NewReader(`{}`), &d); st != 400 {
		t.Fatalf("no origin: %d %+v", st, d)
	}
	r := &connect.ConnectRequest{Audience: todo.key.DID(), Access: connect.AccessRead, Scope: connect.ScopeAccount}
	other := newApp(t, "")
	proof, err := connect.KeyProof{Audience: other.key.DID()}.Sign(other.key)
	if err != nil {
		t.Fatal(err)
	}
	r.Proof = proof // another key's, for itself
	b, _ := canonical.Marshal(canonical.NewObject("request", r.Value()))
	if st := h.do("POST", "/connect/request", map[string]string{"Origin": todo.origin}, bytes.NewReader(b), &d); st != 403 || !strings.Contains(d.Denied, connect.CodeHomeProof) {
		t.Fatalf("a proof by another key: %d %+v", st, d)
	}
	var started struct{ ID string }
	todo.ask(h, &connect.ConnectRequest{Audience: todo.key.DID(), Access: connect.AccessRead, Scope: connect.ScopeAccount, Name: "https://bank.example"}, &started)
	res, _ := http.Get(h.url + "/connect?request=" + started.ID)
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(page, []byte(`<strong id="origin">https://todo.example</strong>`)) {
		t.Fatalf("the page does not show the origin the browser named:\n%s", page)
	}
	h.do("POST", "/connect/request/"+started.ID, formHeader, form(url.Values{"decision": {"deny"}}), nil)
	ans := todo.answer(h, started.ID)
	if !strings.Contains(string(ans["denied"]), "said no") {
		t.Fatalf("%s", ans)
	}
	// A page of another site cannot decide for the person.
	third := newApp(t, "https://third.example")
	third.ask(h, &connect.ConnectRequest{Audience: third.key.DID(), Access: connect.AccessRead, Scope: connect.ScopeAccount}, &started)
	hdr := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}
	if st := h.do("POST", "/connect/request/"+started.ID, hdr, form(url.Values{"decision": {"allow"}}), &d); st != http.StatusForbidden {
		t.Fatalf("another site decided: %d", st)
	}
}

// connect.test.ts: "disconnecting …" (06 §2.10), at this home: a program
// connected by code over the relay is disconnected by its key, and its key
// is revoked in every space the account writes, the registry included.
func TestConnect_Disconnecting(t *testing.T) {
	h := newHome(t)
	key, _ := identity.GenerateKey()
	g := connectByCode(t, h, key, func(v codeView) string { return v.Check })
	if g.Note.Aud != key.DID() || g.Note.Cmd != identity.CmdRecord {
		t.Fatalf("%+v", g.Note)
	}
	var list struct{ Connections []struct{ ID string } }
	h.do("GET", "/connections", map[string]string{"Accept": "application/json"}, nil, &list)
	if len(list.Connections) != 1 || list.Connections[0].ID != "code:"+key.DID() {
		t.Fatalf("%+v", list)
	}
	var d struct {
		Revoked []struct {
			Key    string
			Spaces []string
		}
	}
	if st := h.do("POST", "/connections/disconnect", formHeader, form(url.Values{"id": {"code:" + key.DID()}}), &d); st != 200 {
		t.Fatalf("%d", st)
	}
	if len(d.Revoked) != 1 || d.Revoked[0].Key != key.DID() || len(d.Revoked[0].Spaces) != 1 || d.Revoked[0].Spaces[0] != h.node.Registry() {
		t.Fatalf("%+v", d)
	}
	var rec []map[string]any
	for v, err := range h.node.Store().Export(ctx, h.node.Registry()) {
		if err != nil {
			t.Fatal(err)
		}
		if v.Collection == "sys.revoke" {
			rec = append(rec, map[string]any{"key": v.Key})
		}
	}
	if len(rec) != 1 {
		t.Fatalf("sys.revoke in the registry: %v", rec)
	}
	if st := h.do("POST", "/connections/disconnect", formHeader, form(url.Values{"id": {"code:" + key.DID()}}), nil); st != http.StatusNotFound {
		t.Fatalf("disconnecting again: %d", st)
	}

	// An app with scope spaces is disconnected by its origin, and its key
	// revoked in the space it was granted, nowhere else.
	todo := newApp(t, "https://todo.example")
	var started struct{ ID string }
	todo.ask(h, &connect.ConnectRequest{Audience: todo.key.DID(), Access: connect.AccessWrite, Scope: connect.ScopeSpaces,
		Create: []connect.NewSpace{{Name: "Todos", Visibility: "public"}}}, &started)
	h.do("POST", "/connect/request/"+started.ID, formHeader, form(url.Values{"decision": {"allow"}}), nil)
	g2, err := connect.DecodeGrant(mustParse(t, todo.answer(h, started.ID)["grant"]))
	if err != nil {
		t.Fatal(err)
	}
	if st := h.do("POST", "/connections/disconnect", formHeader, form(url.Values{"id": {"app:" + todo.origin}}), &d); st != 200 {
		t.Fatalf("%d", st)
	}
	if len(d.Revoked) != 1 || d.Revoked[0].Key != todo.key.DID() || len(d.Revoked[0].Spaces) != 1 || d.Revoked[0].Spaces[0] != g2.Spaces[0].ID {
		t.Fatalf("%+v", d)
	}
}

type codeView struct{ ID, State, Name, Check, Audience string }

// connectByCode runs a program over the home's relay while a person on
// the page allows it and gives the program what give says.
func connectByCode(t *testing.T, h *homeT, key *identity.PrivateKey, give func(codeView) string) *connect.Grant {
	t.Helper()
	code, _ := connect.NewCode()
	page := h.url + "/connect"
	p, err := connect.NewProgram(connect.ProgramOptions{Code: code, Page: page, Key: key, Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	room, err := relayroom.Join(ctx, h.relay, code.Room(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer room.Close()
	checks := make(chan string, 1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var started struct{ ID string }
		h.do("POST", "/connect/code", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": h.url}, form(url.Values{"code": {code.String()}}), &started)
		var v codeView
		for deadline := time.Now().Add(time.Minute); v.State != "asked" && time.Now().Before(deadline); {
			time.Sleep(10 * time.Millisecond)
			h.do("GET", "/connect/code/"+started.ID, nil, nil, &v)
		}
		h.do("POST", "/connect/code/"+started.ID, formHeader, form(url.Values{"decision": {"allow"}}), nil)
		checks <- give(v)
	}()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	g, err := connect.RunProgram(c, room, p, func(ctx context.Context, tries int) (string, error) {
		select {
		case s := <-checks:
			return s, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}, &connect.RunOptions{Hail: 50 * time.Millisecond})
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// The home answers at loopback names only: a page that rebinds a name of
// its own to this address gets nothing.
func TestHomeAnswersAtLoopbackNamesOnly(t *testing.T) {
	h := newHome(t)
	req, _ := http.NewRequest("GET", h.url+"/connect", nil)
	req.Host = "evil.example"
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("%d", res.StatusCode)
	}
	var v map[string]any
	if st := h.do("POST", "/connect/code", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example"}, form(url.Values{"code": {"mc_eYV4XGMvhkky6OWpPfqfRQ"}}), &v); st != http.StatusForbidden {
		t.Fatalf("a code from another site: %d %v", st, v)
	}
}

// The connections file survives the home, and a damaged one is said so,
// never read as no connections.
func TestFileStore(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.json")
	s := accounthome.NewFileStore(p)
	c := connect.Connection{Kind: connect.KindCode, Audience: "did:key:zA", Access: connect.AccessWrite, Scope: connect.ScopeAccount, RecordsOnly: true,
		Replaced: []connect.Reach{{Key: "did:key:zB", Account: true}}}
	if err := s.Apply(ctx, []connect.Connection{c}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := accounthome.NewFileStore(p).Connections(ctx)
	if err != nil || len(got) != 1 || got[0].ID() != c.ID() || len(got[0].Replaced) != 1 || got[0].Replaced[0].Key != "did:key:zB" {
		t.Fatalf("%+v %v", got, err)
	}
	if err := s.Apply(ctx, nil, []string{c.ID()}); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Connections(ctx); len(got) != 0 {
		t.Fatalf("%+v", got)
	}
	os.WriteFile(p, []byte(`[{"Kind":2,"Audi`), 0o600)
	if _, err := s.Connections(ctx); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Fatalf("a damaged file: %v", err)
	}
}

// connect-code.test.ts: "a home opened at a link nobody waits on any more
// says so" (06 §3), on the page: the exchange ends as nobody, and the page
// tells the person to start again from the program.
func TestConnectCode_AHomeOpenedAtALinkNobodyWaitsOnAnyMoreSaysSo(t *testing.T) {
	h := newHomeWith(t, func(o *accounthome.Options) { o.Wait = 300 * time.Millisecond })
	code, _ := connect.NewCode()
	var started struct{ ID string }
	h.do("POST", "/connect/code", map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": h.url}, form(url.Values{"code": {"see " + code.Link(h.url+"/connect")}}), &started)
	var v codeView
	for deadline := time.Now().Add(time.Minute); v.State != "nobody" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		h.do("GET", "/connect/code/"+started.ID, nil, nil, &v)
	}
	if v.State != "nobody" {
		t.Fatalf("%+v", v)
	}
	res, err := http.Get(h.url + "/connect?code=" + started.ID)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !bytes.Contains(page, []byte("Nobody is waiting")) || !bytes.Contains(page, []byte("start again from the program")) || bytes.Contains(page, []byte(`value="allow"`)) {
		t.Fatalf("the page:\n%s", page)
	}
}
