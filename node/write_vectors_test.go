package node

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

// specVectors reads the spec's worked examples (testdata/spec-vectors.json).
func specVectors(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func defWith(t *testing.T, name string, members ...any) *collection.Definition {
	t.Helper()
	o := canonical.NewObject("name", name, "version", float64(1), "schema", canonical.NewObject("type", "object"))
	for i := 0; i+1 < len(members); i += 2 {
		o.Set(members[i].(string), members[i+1])
	}
	d, err := collection.ParseDefinition(o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The keys the write path gives, against 02 §4.1's and §7.3's examples.
func TestWriteKeysAgainstTheSpecExamples(t *testing.T) {
	vs := specVectors(t)
	var owner struct{ Root, Owner, Chosen_settings string }
	json.Unmarshal(vs["owner_02_4_1"], &owner)
	none := collection.InForce{}
	k, err := keyFor("app.todo.item", "settings", owner.Root, none, collection.OneKey{}, collection.Content{})
	if err != nil || k != owner.Chosen_settings {
		t.Fatalf("the chosen name settings gives %q (%v), want %s (02 §4.1)", k, err, owner.Chosen_settings)
	}
	fresh, err := keyFor("app.todo.item", "", owner.Root, none, collection.OneKey{}, collection.Content{})
	if err != nil || record.KindOf(fresh) != record.KindOwned || record.Owner(fresh) != owner.Owner || len(fresh) != 26+1+26 {
		t.Fatalf("a fresh key is %q (%v), want %s. and 26 characters (02 §4.1)", fresh, err, owner.Owner)
	}
	if _, err := keyFor("app.todo.item", "zzzzzzzzzzzzzzzzzzzzzzzzzz.settings", owner.Root, none, collection.OneKey{}, collection.Content{}); err == nil {
		t.Fatal("another account's owned key was taken")
	}
	if _, err := keyFor("app.todo.item", "one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a", owner.Root, none, collection.OneKey{}, collection.Content{}); err == nil {
		t.Fatal("a shared key was taken in a collection without onePer")
	}

	var one struct {
		Space        string
		Vote_public  struct{ Collection, Root, Link_about, Key string }
		Decision_pub struct{}                                     `json:"-"`
		Decision     struct{ Collection, Link_about, Key string } `json:"decision_public"`
		Vote_private struct{ K0_hex, Key string }
	}
	json.Unmarshal(vs["onePer_02_7_3"], &one)
	vote := defWith(t, "std.vote", "rules", canonical.NewObject("onePer", []any{"@author", "link:about"}))
	decision := defWith(t, "std.decision", "rules", canonical.NewObject("onePer", []any{"link:about"}))
	about := collection.Content{Body: canonical.NewObject("choice", float64(1)), Links: []record.Link{{Rel: "about", To: one.Vote_public.Link_about}}}
	pub := collection.PublicOneKey(one.Space)
	k0, _ := hex.DecodeString(one.Vote_private.K0_hex)
	priv, err := collection.PrivateOneKey(k0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		d    *collection.Definition
		key  collection.OneKey
		want string
	}{
		{"std.vote in the public space", vote, pub, one.Vote_public.Key},
		{"std.decision in the public space", decision, pub, one.Decision.Key},
		{"std.vote with the private K0", vote, priv, one.Vote_private.Key},
	} {
		got, err := keyFor(c.d.Name, "", one.Vote_public.Root, collection.Defined(c.d), c.key, about)
		if err != nil || got != c.want {
			t.Errorf("%s: the write path's key is %q (%v), want %s (02 §7.3)", c.name, got, err, c.want)
		}
		if _, err := keyFor(c.d.Name, "settings", one.Vote_public.Root, collection.Defined(c.d), c.key, about); err == nil {
			t.Errorf("%s: a chosen key was taken where onePer derives it", c.name)
		}
	}
	if _, err := keyFor("std.vote", "", one.Vote_public.Root, collection.Defined(vote), pub, collection.Content{Body: canonical.NewObject()}); err == nil {
		t.Error("a vote with no link about has no key, and was given one")
	}
}

// The tags the write path puts on a version (its definition's Tags), against 02 §8.3's examples.
func TestWriteTagsAgainstTheSpecExamples(t *testing.T) {
	var tags struct {
		Space   string
		Channel struct{ Collection, Topic, Value, Tag string }
		LinkIn  struct{ Collection, Topic, Value, Tag string } `json:"link_in"`
	}
	json.Unmarshal(specVectors(t)["tags_02_8_3"], &tags)
	k := collection.PublicTagKey(tags.Space)
	chat := defWith(t, tags.Channel.Collection, "topics", []any{tags.Channel.Topic})
	got, err := chat.Tags(k, collection.Content{Body: canonical.NewObject("channel", tags.Channel.Value, "text", "hi")})
	if err != nil || !slices.Equal(got, []string{tags.Channel.Tag}) {
		t.Errorf("channel %q tags %v (%v), want [%s]", tags.Channel.Value, got, err, tags.Channel.Tag)
	}
	msg := defWith(t, tags.LinkIn.Collection, "topics", []any{tags.LinkIn.Topic})
	got, err = msg.Tags(k, collection.Content{Body: canonical.NewObject(), Links: []record.Link{{Rel: "in", To: tags.LinkIn.Value}}})
	if err != nil || !slices.Equal(got, []string{tags.LinkIn.Tag}) {
		t.Errorf("link:in tags %v (%v), want [%s]", got, err, tags.LinkIn.Tag)
	}
	got, err = chat.Tags(k, collection.Content{Body: canonical.NewObject("text", "no channel")})
	if err != nil || len(got) != 0 {
		t.Errorf("a version with no topic values carries tags %v (%v), want none", got, err)
	}
}
