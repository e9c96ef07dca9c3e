package node_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
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
	cur, err := tn.Store().CurrentJSON(ctx, g.ID, v.Key)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := tn.Reveal(ctx, cur)
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
		t.Errorf("Reveal gives %s (%v)", rv, err)
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
	held, err := other.Store().Version(ctx, v.ID)
	if err != nil || held.BodyHash != v.BodyHash {
		t.Fatalf("the keyless node does not hold the version whole: %v", err)
	}
	_, err = other.Put(ctx, g.ID, "app.note", canonical.NewObject("text", "x"), nil)
	var we *node.WriteError
	if !errors.As(err, &we) {
		t.Fatalf("a keyless node wrote in a private space: %v", err)
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
