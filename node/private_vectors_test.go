package node

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"slices"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// 02 §7.3's private example and the profile's tags under K₀
// (docs/private-spaces.md §12, "derived") through node.Put, in a private
// space whose K₀ is ff fe … e0.
func TestPrivateWriteAgainstTheSpecExamples(t *testing.T) {
	ctx := context.Background()
	var one struct {
		Vote_public  struct{ Root, Link_about, Key string }
		Vote_private struct{ K0_hex, Key string }
	}
	if err := json.Unmarshal(specVectors(t)["onePer_02_7_3"], &one); err != nil {
		t.Fatal(err)
	}
	raw, _ := hex.DecodeString(one.Vote_private.K0_hex)
	k0, err := seal.KeyFromBytes(raw)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	n, err := Open(ctx, &Options{Dir: t.TempDir(), Store: "memory:", Account: acc})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	g, err := space.NewGenesis(space.GenesisOptions{Name: "vectors", Private: true, Founders: []string{acc.DID()},
		CreatedAt: "2026-09-26T12:00:00.000Z", Nonce: "vectors", EncryptionKeyID: k0.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.startRing(g, k0); err != nil {
		t.Fatal(err)
	}
	if err := n.JoinGenesis(ctx, g); err != nil {
		t.Fatal(err)
	}
	def := func(text string) {
		t.Helper()
		v, err := canonical.Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Define(ctx, g.ID, v); err != nil {
			t.Fatal(err)
		}
	}
	def(`{"name":"std.vote","version":1,"schema":{"type":"object"},"links":{"about":{"to":"*"}},"rules":{"onePer":["@author","link:about"]}}`)
	def(`{"name":"app.chat.message","version":1,"schema":{"type":"object"},"topics":["channel"]}`)
	def(`{"name":"std.message","version":1,"schema":{"type":"object"},"links":{"in":{"to":"*"}},"topics":["link:in"]}`)

	// The definitions are sealed, and the write path reads them opened.
	d, err := n.st.Current(ctx, g.ID, collection.KeyPrefix+"std.vote")
	if err != nil || !seal.IsSealed(d.Body) {
		t.Fatalf("a private space's definition is sealed (02 §6.1): %v", err)
	}

	// The write path's oneKey is K₀'s: the example's root gives the
	// example's key with it.
	ok, held := n.keys.Keyring(g.ID).OneKey()
	if !held {
		t.Fatal("the ring holds no K₀")
	}
	vote := defWith(t, "std.vote", "rules", canonical.NewObject("onePer", []any{"@author", "link:about"}))
	about := collection.Content{Body: canonical.NewObject("choice", float64(1)), Links: []record.Link{{Rel: "about", To: one.Vote_public.Link_about}}}
	if k, err := keyFor("std.vote", "", one.Vote_public.Root, collection.Defined(vote), ok, about); err != nil || k != one.Vote_private.Key {
		t.Errorf("the write path's key for the example's vote is %q (%v), want %s (02 §7.3)", k, err, one.Vote_private.Key)
	}
	// Through Put, the node's own vote is at the key of its own root under
	// the same K₀, and a second vote is the next version of the first.
	v1, err := n.Put(ctx, g.ID, "std.vote", about.Body, &PutOptions{Links: about.Links})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := keyFor("std.vote", "", acc.DID(), collection.Defined(vote), ok, about)
	if v1.Key != want || !v1.Retain {
		t.Errorf("the vote is at %s (retain %v), want %s, retained", v1.Key, v1.Retain, want)
	}
	v2, err := n.Put(ctx, g.ID, "std.vote", canonical.NewObject("choice", float64(2)), &PutOptions{Links: about.Links})
	if err != nil || v2.Key != v1.Key || v2.Seq != 1 {
		t.Fatalf("a second vote: %v, %v; want the next version at %s", v2, err, v1.Key)
	}

	for _, c := range []struct {
		coll string
		body any
		link []record.Link
		tag  string
	}{
		{"app.chat.message", canonical.NewObject("channel", "design", "text", "hi"), nil, "TgmCS9mY8cfHEpVqutPZcw"},
		{"std.message", canonical.NewObject("text", "hi"), []record.Link{{Rel: "in", To: "mfrggzdfmztwq2lknnwg23tpoa"}}, "1Wa_2upBVvBbyTlTCOHXvQ"},
	} {
		v, err := n.Put(ctx, g.ID, c.coll, c.body, &PutOptions{Links: c.link})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v.Tags, []string{c.tag}) {
			t.Errorf("%s: tags %v, want [%s] (02 §8.2 under K₀; docs/private-spaces.md §12)", c.coll, v.Tags, c.tag)
		}
	}
}
