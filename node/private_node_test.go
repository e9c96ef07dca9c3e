package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/node"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// privateNode is a node with a private space it founded.
func privateNode(t *testing.T, o *node.Options, roles map[string][]space.Grant) (*testNode, *space.Genesis) {
	t.Helper()
	tn := newNode(t, o)
	g, err := tn.CreateSpace(context.Background(), "family", &node.CreateOptions{Private: true, Roles: roles})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Private() || !seal.ValidKeyID(g.EncryptionKeyID) {
		t.Fatalf("a private space's genesis names its K₀: %s", g.Canonical())
	}
	return tn, g
}

// opened is what a node's read of a version gives: the body and links
// its sealed body holds.
func opened(t *testing.T, tn *testNode, v *record.Version) *node.Opened {
	t.Helper()
	o, err := tn.Open(context.Background(), v)
	if err != nil || o == nil {
		t.Fatalf("opening %s: %v, %v", v.Key, o, err)
	}
	return o
}

func canon(t *testing.T, v any) string {
	t.Helper()
	b, err := canonical.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// In a private space the node seals body and links together under the
// current key, bodyHash covers the sealed body, the version carries no
// links, and the node opens what it wrote.
func TestPrivatePutSealsAndOpens(t *testing.T) {
	ctx := context.Background()
	tn, g := privateNode(t, nil, nil)
	body := canonical.NewObject("text", "Buy milk", "done", false)
	links := []record.Link{{Rel: "in", To: "list.groceries"}}
	v := put(t, tn, g.ID, "app.note", body, &node.PutOptions{Links: links})
	s, err := seal.ParseSealed(v.Body)
	if err != nil {
		t.Fatalf("the body is not sealed: %v", err)
	}
	if s.KeyID != g.EncryptionKeyID {
		t.Errorf("sealed under %s, want K₀ %s (no key change yet)", s.KeyID, g.EncryptionKeyID)
	}
	if len(v.Links) != 0 {
		t.Errorf("a private version carries links %v outside its body (02 §5.1)", v.Links)
	}
	if h, _ := canonical.ContentID(v.Body); h.String() != v.BodyHash {
		t.Errorf("bodyHash %s is not the content id of the sealed body (02 §4.9)", v.BodyHash)
	}
	raw, _ := v.MarshalJSON()
	if strings.Contains(string(raw), "Buy milk") || strings.Contains(string(raw), "groceries") {
		t.Fatalf("the signed version shows its plaintext: %s", raw)
	}
	o := opened(t, tn, v)
	if canon(t, o.Body) != canon(t, body) || len(o.Links) != 1 || o.Links[0] != links[0] {
		t.Errorf("opened %s %v, want %s %v", canon(t, o.Body), o.Links, canon(t, body), links)
	}
	cur, err := tn.Get(ctx, g.ID, v.Key)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := cur.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Opened struct {
			Body  map[string]any
			Links []record.Link
		}
	}
	if err := json.Unmarshal(rv, &shown); err != nil || shown.Opened.Body["text"] != "Buy milk" || len(shown.Opened.Links) != 1 {
		t.Errorf("Get gives %s (%v)", rv, err)
	}

	// A stub-free history reads opened too, after the node is reopened
	// from its key file.
	v2 := put(t, tn, g.ID, "app.note", canonical.NewObject("text", "Buy oat milk", "done", true), &node.PutOptions{Key: v.Key})
	tn.reopen(nil)
	if o := opened(t, tn, v2); canon(t, o.Body) != `{"done":true,"text":"Buy oat milk"}` {
		t.Errorf("after reopening, opened %s", canon(t, o.Body))
	}
	// The query reads opened bodies.
	page, err := tn.Query(ctx, g.ID, json.RawMessage(`{"collection":"app.note","where":{"text":"Buy oat milk"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Entries) != 1 || !strings.Contains(string(page.Entries[0]), `"opened":{"body":{"done":true,"text":"Buy oat milk"}}`) {
		t.Errorf("a query on an opened field gives %s", page.Entries)
	}
}

// A node that holds a private space without its key writes nothing in it
// (nothing in the clear) and reads it sealed.
func TestPrivateWithoutTheKey(t *testing.T) {
	ctx := context.Background()
	tn, g := privateNode(t, nil, nil)
	v := put(t, tn, g.ID, "app.note", canonical.NewObject("text", "secret"), nil)

	other := newNode(t, nil)
	if err := other.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	copyVersions(t, tn, other, g.ID)
	if _, err := other.Open(ctx, v); !errors.Is(err, node.ErrNoKey) {
		t.Errorf("a keyless node opened a body: %v", err)
	}
	held, err := other.Store().Version(ctx, enginetest.Digest(v))
	if err != nil || held.BodyHash != v.BodyHash {
		t.Fatalf("the keyless node does not hold the version whole: %v", err)
	}
	// Without a ring (write/private), or — its account key lets it look for
	// boxes to the account — with an empty one (seal/no-current).
	_, err = other.Put(ctx, g.ID, "app.note", canonical.NewObject("text", "x"), nil)
	var we *node.WriteError
	if !errors.As(err, &we) || we.Code != node.CodePrivate && we.Code != seal.CodeNoCurrent {
		t.Fatalf("a keyless node's write gives %v", err)
	}
}

// copyVersions admits every version one node holds of a space into
// another, through its judge, as sync or an import would.
func copyVersions(t *testing.T, from, to *testNode, spaceID string) {
	t.Helper()
	ctx := context.Background()
	var vs []*record.Version
	for v, err := range from.Store().Export(ctx, spaceID) {
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	if _, err := to.Store().Admit(ctx, "copy", vs); err != nil {
		t.Fatal(err)
	}
}

// syncAll copies every node's versions of a space into every other, both
// ways, as sync would.
func syncAll(t *testing.T, spaceID string, nodes ...*testNode) {
	t.Helper()
	for round := 0; round < 2; round++ {
		for _, a := range nodes {
			for _, b := range nodes {
				if a != b {
					copyVersions(t, a, b, spaceID)
				}
			}
		}
	}
}

func join(t *testing.T, inviter, joiner *testNode, spaceID string, roles ...string) {
	t.Helper()
	ctx := context.Background()
	text, err := inviter.Invite(ctx, spaceID, roles)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := joiner.JoinInvite(ctx, text); err != nil {
		t.Fatal(err)
	}
}

func noteIn(t *testing.T, tn *testNode, spaceID, text string) *record.Version {
	t.Helper()
	return put(t, tn, spaceID, "app.note", canonical.NewObject("text", text), nil)
}

func readsAs(t *testing.T, tn *testNode, v *record.Version, text string) {
	t.Helper()
	o, err := tn.Open(context.Background(), v)
	if err != nil || o == nil {
		t.Fatalf("%s cannot open %q: %v", tn.Account(), text, err)
	}
	if got := canon(t, o.Body); got != canon(t, canonical.NewObject("text", text)) {
		t.Fatalf("opened %s, want %q", got, text)
	}
}

func cannotOpen(t *testing.T, tn *testNode, v *record.Version) {
	t.Helper()
	o, err := tn.Open(context.Background(), v)
	if !errors.Is(err, node.ErrNoKey) || o != nil {
		t.Fatalf("%s opened a body it must not hold the key of: %v, %v", tn.Account(), o, err)
	}
}

var writers = map[string][]space.Grant{"writer": {space.MustGrant("/record")}, "keeper": {space.MustGrant("/record"), space.MustGrant(space.CmdKey)}}

// Removing a member changes the key, boxed to the members that remain: the
// removed member reads what was written before and nothing after; a
// member joining later reads everything through the chain (earlier).
func TestPrivateRemoveRotatesTheKey(t *testing.T) {
	ctx := context.Background()
	ada, g := privateNode(t, nil, writers)
	ben, cy := newNode(t, nil), newNode(t, nil)
	join(t, ada, ben, g.ID, "writer")
	join(t, ada, cy, g.ID, "writer")
	syncAll(t, g.ID, ada, ben, cy)

	before := noteIn(t, ben, g.ID, "before")
	syncAll(t, g.ID, ada, ben, cy)
	readsAs(t, cy, before, "before")
	readsAs(t, ada, before, "before")

	if _, err := ada.Remove(ctx, g.ID, cy.Account()); err != nil {
		t.Fatal(err)
	}
	after := noteIn(t, ada, g.ID, "after")
	if s, _ := seal.ParseSealed(after.Body); s.KeyID == g.EncryptionKeyID {
		t.Fatal("written after a removal under K₀, which the removed member holds")
	}
	syncAll(t, g.ID, ada, ben, cy)
	readsAs(t, ben, after, "after") // through his box
	cannotOpen(t, cy, after)
	readsAs(t, cy, before, "before")
	// Ben now seals under the new key too.
	benAfter := noteIn(t, ben, g.ID, "ben after")
	if s, _ := seal.ParseSealed(benAfter.Body); s.KeyID != mustSealed(t, after).KeyID {
		t.Errorf("Ben seals under %s, Ada under %s", s.KeyID, mustSealed(t, after).KeyID)
	}
	syncAll(t, g.ID, ada, ben, cy)
	cannotOpen(t, cy, benAfter)
	// Cy's node writes nothing more under a key it holds: the space moved on.
	if _, err := cy.Put(ctx, g.ID, "app.note", canonical.NewObject("text", "x"), nil); err == nil {
		t.Error("the removed member's node wrote in the space")
	}

	// Dee joins now: her invite carries the key in use, and the chain
	// brings K₀ with it.
	dee := newNode(t, nil)
	join(t, ada, dee, g.ID, "writer")
	syncAll(t, g.ID, ada, dee)
	readsAs(t, dee, before, "before")
	readsAs(t, dee, after, "after")
	readsAs(t, dee, benAfter, "ben after")
}

func mustSealed(t *testing.T, v *record.Version) *seal.Sealed {
	t.Helper()
	s, err := seal.ParseSealed(v.Body)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Two key changes made apart merge: both are current, every member ends
// up holding both, and every writer then seals under the same one, the
// keyId that sorts first (docs/private-spaces.md §10).
func TestPrivateConcurrentKeyChanges(t *testing.T) {
	ctx := context.Background()
	ada, g := privateNode(t, nil, writers)
	ben := newNode(t, nil)
	join(t, ada, ben, g.ID, "keeper")
	syncAll(t, g.ID, ada, ben)

	ka, err := ada.ChangeKey(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := ben.ChangeKey(ctx, g.ID)
	if err != nil {
		t.Fatal(err)
	}
	syncAll(t, g.ID, ada, ben)
	idA, idB := strings.TrimPrefix(ka.Key, "key:"), strings.TrimPrefix(kb.Key, "key:")
	want := min(idA, idB)
	va, vb := noteIn(t, ada, g.ID, "from ada"), noteIn(t, ben, g.ID, "from ben")
	for _, v := range []*record.Version{va, vb} {
		if s := mustSealed(t, v); s.KeyID != want {
			t.Errorf("%s sealed under %s; the current keys are %s and %s, and %s sorts first", v.Author, s.KeyID, idA, idB, want)
		}
	}
	syncAll(t, g.ID, ada, ben)
	readsAs(t, ada, vb, "from ben")
	readsAs(t, ben, va, "from ada")
}

// A node that holds the space without its key (a carrier, a restore
// without keys) stores the same versions as a member, with the same
// standing, including versions only a member could refuse being absent
// from neither.
func TestPrivateKeylessConvergesWithAMember(t *testing.T) {
	ctx := context.Background()
	ada, g := privateNode(t, nil, writers)
	ben := newNode(t, nil)
	join(t, ada, ben, g.ID, "writer")
	syncAll(t, g.ID, ada, ben)
	def, _ := canonical.Parse([]byte(`{"name":"app.vote","version":1,"schema":{"type":"object"},"links":{"about":{"to":"*"}},"rules":{"onePer":["@author","link:about"]},"topics":["link:about"]}`))
	if _, err := ada.Define(ctx, g.ID, def); err != nil {
		t.Fatal(err)
	}
	syncAll(t, g.ID, ada, ben)
	about := []record.Link{{Rel: "about", To: "poll.one"}}
	for i, tn := range []*testNode{ada, ben, ada} {
		put(t, tn, g.ID, "app.vote", canonical.NewObject("choice", float64(i)), &node.PutOptions{Links: about})
		noteIn(t, tn, g.ID, "note")
	}
	if _, err := ada.Remove(ctx, g.ID, ben.Account()); err != nil {
		t.Fatal(err)
	}
	noteIn(t, ada, g.ID, "after ben")
	syncAll(t, g.ID, ada, ben)

	carrier := newNode(t, nil)
	if err := carrier.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	copyVersions(t, ben, carrier, g.ID) // what Ben holds first, then the rest
	copyVersions(t, ada, carrier, g.ID)
	member, keyless := standings(t, ada, g.ID), standings(t, carrier, g.ID)
	if len(member) < 12 {
		t.Fatalf("the member holds only %d versions", len(member))
	}
	for id, s := range member {
		if keyless[id] != s {
			t.Errorf("version %s: the member holds it %s, the keyless node %q", id, s, keyless[id])
		}
	}
	for id, s := range keyless {
		if _, ok := member[id]; !ok {
			t.Errorf("the keyless node holds %s (%s), the member does not", id, s)
		}
	}
}

// standings are the versions a node holds of a space and their standing.
func standings(t *testing.T, tn *testNode, spaceID string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	for v, err := range tn.Store().Export(ctx, spaceID) {
		if err != nil {
			t.Fatal(err)
		}
		s, _, err := tn.Store().Standing(ctx, enginetest.Digest(v))
		if err != nil {
			t.Fatal(err)
		}
		out[v.ID] = s.String()
	}
	return out
}

// A key file that does not read is named on the write path, not taken for
// a space whose keys the node lacks.
func TestPrivateDamagedKeyFile(t *testing.T) {
	ctx := context.Background()
	tn, g := privateNode(t, nil, nil)
	if err := tn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tn.dir, "keys", g.ID+".json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	tn.open(nil)
	_, err := tn.Put(ctx, g.ID, "app.note", canonical.NewObject("text", "x"), nil)
	if err == nil || !strings.Contains(err.Error(), "key file") {
		t.Fatalf("a write over a damaged key file gives %v, want the key file named", err)
	}
}

// A node that held a private space without its key and then takes it (an
// invite) indexes what it held again, opened: queries over the bodies
// find what was indexed sealed.
func TestPrivateIndexOpensOnceTheKeyArrives(t *testing.T) {
	ctx := context.Background()
	ada, g := privateNode(t, nil, writers)
	noteIn(t, ada, g.ID, "held sealed")
	ben := newNode(t, nil)
	if err := ben.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	copyVersions(t, ada, ben, g.ID)
	q := json.RawMessage(`{"collection":"app.note","where":{"text":"held sealed"}}`)
	page, err := ben.Query(ctx, g.ID, q)
	if err != nil || len(page.Entries) != 0 {
		t.Fatalf("without the key, a query on a sealed body's field finds %d (%v)", len(page.Entries), err)
	}
	join(t, ada, ben, g.ID, "writer")
	deadline := time.Now().Add(30 * time.Second)
	for {
		page, err := ben.Query(ctx, g.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) == 1 && strings.Contains(string(page.Entries[0]), `"opened":{"body":{"text":"held sealed"}}`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("with the key, the query finds %s", page.Entries)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Another device of the account (the account key, its own directory)
// follows the registry to a private space and takes its keys from the
// boxes to the account's member key: K₀'s, boxed at creation, and a
// later key's.
func TestPrivateAnotherDeviceOfTheAccount(t *testing.T) {
	ctx := context.Background()
	ada, g := privateNode(t, nil, writers)
	ben := newNode(t, nil)
	join(t, ada, ben, g.ID, "writer")
	syncAll(t, g.ID, ada, ben)
	first := noteIn(t, ada, g.ID, "first")
	if _, err := ada.Remove(ctx, g.ID, ben.Account()); err != nil {
		t.Fatal(err)
	}
	second := noteIn(t, ada, g.ID, "second")

	phone := newNode(t, &node.Options{Account: ada.account})
	phone.account = ada.account // reopened with it too
	copyVersions(t, ada, phone, ada.Registry())
	phone.reopen(nil) // follows the registry: the space's genesis, its ring
	if phone.Account() != ada.Account() {
		t.Fatal("the phone is not the account's")
	}
	copyVersions(t, ada, phone, g.ID)
	readsAs(t, phone, first, "first")
	readsAs(t, phone, second, "second")
	if v := noteIn(t, phone, g.ID, "from the phone"); mustSealed(t, v).KeyID != mustSealed(t, second).KeyID {
		t.Errorf("the phone seals under %s, the laptop under %s", mustSealed(t, v).KeyID, mustSealed(t, second).KeyID)
	}
}
