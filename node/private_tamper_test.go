package node_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/engine/enginetest"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// keysOf reads the keys a node keeps for a space from its key file.
func keysOf(t *testing.T, tn *testNode, spaceID string) []*seal.Key {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tn.dir, "keys", spaceID+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Keys []string }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var out []*seal.Key
	for _, s := range f.Keys {
		k, err := seal.ParseKey(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

// A sealed body tampered with — a bit flipped, moved to another record or
// space, relabelled with another key's id, truncated — is signed anew by a
// member and handed to a member's node and to a keyless one: the member
// refuses it without opening it (seal/open, seal/shape), the keyless node
// refuses what it can see is no envelope and stores the rest sealed, as
// the profile says (docs/private-spaces.md §9); nothing opens.
func TestPrivateTamperedBodies(t *testing.T) {
	ctx := context.Background()
	ada, g := privateNode(t, nil, writers)
	ben := newNode(t, nil)
	join(t, ada, ben, g.ID, "writer")
	syncAll(t, g.ID, ada, ben)                          // Ada holds Ben's member key
	if _, err := ada.ChangeKey(ctx, g.ID); err != nil { // so Ada holds two keys
		t.Fatal(err)
	}
	// Ada changed the key before she held Ben's member key: she boxes it
	// to him once she sees it.
	syncAll(t, g.ID, ada, ben)
	if err := ada.BoxMissing(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	syncAll(t, g.ID, ada, ben)
	legit := noteIn(t, ben, g.ID, "legit")
	syncAll(t, g.ID, ada, ben)
	keys := keysOf(t, ada, g.ID)
	if len(keys) != 2 {
		t.Fatalf("Ada keeps %d keys, want K₀ and K₁", len(keys))
	}
	cur := mustSealed(t, legit).KeyID
	var k, other *seal.Key
	for _, x := range keys {
		if x.ID() == cur {
			k = x
		} else {
			other = x
		}
	}
	keyless := newNode(t, nil)
	if err := keyless.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	copyVersions(t, ada, keyless, g.ID)

	var seen []any
	if _, err := ada.Judge().WithHistory(ctx, g.ID, func(h *space.History) error {
		for _, id := range h.Heads() {
			seen = append(seen, id)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Each forgery is the first of Ben's account key's line in its own
	// collection (02 §4.10), so none waits for another.
	n := 0
	coll := func() string { return "app.note" + string(rune('a'+n)) }
	forgeIn := func(c, key string, body any) *record.Version {
		t.Helper()
		o := canonical.NewObject("space", g.ID, "collection", c, "createdAt", "2026-09-26T12:00:00.000Z",
			"key", key, "seq", float64(0), "seen", seen, "log", canonical.NewObject("n", float64(0)), "body", body)
		n++
		v, err := record.Sign(o, ben.account)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	forge := func(key string, body any) *record.Version { return forgeIn(coll(), key, body) }
	fresh := func() string {
		k, err := record.FreshKey(ben.Account())
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	content := collection.Content{Body: canonical.NewObject("text", "forged")}
	sealedFor := func(k *seal.Key, spaceID, key string) *seal.Sealed {
		b, err := seal.SealBody(k, spaceID, coll(), key, content)
		if err != nil {
			t.Fatal(err)
		}
		s, err := seal.ParseSealed(b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	withEnv := func(id string, env []byte) *canonical.Object {
		return canonical.NewObject("keyId", id, "sealed", base64.RawURLEncoding.EncodeToString(env))
	}

	type forged struct {
		name         string
		v            *record.Version
		member       string // the member's refusal code
		keylessStore bool   // whether a keyless peer stores it
	}
	var cases []forged
	{
		key := fresh()
		s := sealedFor(k, g.ID, key)
		s.Envelope[len(s.Envelope)/2] ^= 0x04
		cases = append(cases, forged{"a bit flipped", forge(key, s.Object()), seal.CodeOpen, true})
	}
	{
		// Ben's own legit body, re-signed at another of his records.
		// In app.note, the legit one's collection: only the key differs.
		cases = append(cases, forged{"moved to another record", forgeIn("app.note", fresh(), legit.Body), seal.CodeOpen, true})
	}
	{
		key := fresh()
		s := sealedFor(k, "b6ttwnaot2m5jfgqw7zaldz6z2gepnajeqwj4wgh45iyn5utcpwdq", key)
		cases = append(cases, forged{"moved from another space", forge(key, s.Object()), seal.CodeOpen, true})
	}
	{
		key := fresh()
		s := sealedFor(k, g.ID, key)
		cases = append(cases, forged{"the keyId of another key held", forge(key, withEnv(other.ID(), s.Envelope)), seal.CodeOpen, true})
	}
	{
		key := fresh()
		s := sealedFor(k, g.ID, key)
		cases = append(cases, forged{"truncated past its tag", forge(key, withEnv(s.KeyID, s.Envelope[:len(s.Envelope)-5])), seal.CodeOpen, true})
	}
	{
		key := fresh()
		s := sealedFor(k, g.ID, key)
		cases = append(cases, forged{"truncated to less than an envelope", forge(key, withEnv(s.KeyID, s.Envelope[:30])), seal.CodeShape, false})
	}
	{
		cases = append(cases, forged{"in the clear", forge(fresh(), canonical.NewObject("text", "plain")), seal.CodeShape, false})
	}
	for _, c := range cases {
		outs, err := ada.Store().Admit(ctx, "peer", []*record.Version{c.v})
		if err != nil {
			t.Fatal(err)
		}
		if o := outs[0]; o.Verdict != engine.Refused || o.Refusal == nil || o.Refusal.Code != c.member {
			t.Errorf("%s: the member's node gives %v %v, want refused %s", c.name, o.Verdict, o.Refusal, c.member)
		}
		if _, err := ada.Store().Version(ctx, enginetest.Digest(c.v)); err == nil {
			t.Errorf("%s: the member's node stored it", c.name)
		}
		outs, err = keyless.Store().Admit(ctx, "peer", []*record.Version{c.v})
		if err != nil {
			t.Fatal(err)
		}
		if stored := outs[0].Verdict == engine.Stands; stored != c.keylessStore {
			t.Errorf("%s: the keyless node gives %v %v, want stored %v", c.name, outs[0].Verdict, outs[0].Refusal, c.keylessStore)
		}
		if c.keylessStore {
			cannotOpen(t, keyless, c.v)
		}
		if o, err := ada.Open(ctx, c.v); err == nil || o != nil {
			t.Errorf("%s: the member's node opened it: %v", c.name, o)
		}
	}
}

// A writer's own member named "opened" is not what the node opened: a
// query never reads a body from it, in a public space or a private one.
func TestPrivateOpenedIsTheNodesOwn(t *testing.T) {
	ctx := context.Background()
	for _, private := range []bool{false, true} {
		tn, g := privateNode(t, nil, nil)
		if !private {
			g = tn.space("public", nil)
		}
		key, _ := record.FreshKey(tn.Account())
		body := any(canonical.NewObject("text", "real"))
		if private {
			k := keysOf(t, tn, g.ID)[0]
			b, err := seal.SealBody(k, g.ID, "app.note", key, collection.Content{Body: body})
			if err != nil {
				t.Fatal(err)
			}
			body = b
		}
		o := canonical.NewObject("space", g.ID, "collection", "app.note", "createdAt", "2026-09-26T12:00:00.000Z",
			"key", key, "seq", float64(0), "log", canonical.NewObject("n", float64(0)), "body", body,
			"opened", canonical.NewObject("body", canonical.NewObject("text", "fake")))
		v, err := record.Sign(o, tn.account)
		if err != nil {
			t.Fatal(err)
		}
		outs, err := tn.Store().Admit(ctx, "peer", []*record.Version{v})
		if err != nil || outs[0].Verdict != engine.Stands {
			t.Fatalf("private %v: %v %v", private, outs, err)
		}
		// In a private space the node does not put its opening beside a
		// writer's member of the same name: such a version is not found
		// by its body at all, which its writer could as well have left
		// unwritten.
		real := 1
		if private {
			real = 0
		}
		for text, want := range map[string]int{"fake": 0, "real": real} {
			page, err := tn.Query(ctx, g.ID, json.RawMessage(`{"collection":"app.note","where":{"text":"`+text+`"}}`))
			if err != nil {
				t.Fatal(err)
			}
			if len(page.Entries) != want {
				t.Errorf("private %v: a query for %q finds %d, want %d: %s", private, text, len(page.Entries), want, page.Entries)
			}
		}
	}
}
