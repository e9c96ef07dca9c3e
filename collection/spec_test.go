package collection

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/minca-go/minca/record"
)

// 02 §6.1: the std.vote definition, as stored, is valid and reads as it says.
func TestSpecStdVoteIsValid(t *testing.T) {
	d := mustDef(t, stdVote)
	if d.Name != "std.vote" || d.Title != "Vote" || d.Version != 1 || d.History != HistoryLatest {
		t.Fatalf("definition %+v", d)
	}
	l, ok := d.Link("about")
	if !ok || !l.One || len(l.To) != 1 || l.To[0] != "std.poll" || l.Description != "The poll voted on" {
		t.Fatalf("links %+v", d.Links)
	}
	if !d.Rules.HasOnePer() || !d.Rules.OnePerWithAuthor() || len(d.Rules.OnePer) != 2 ||
		d.Rules.OnePer[1] != (Part{Kind: PartLink, Name: "about"}) {
		t.Fatalf("rules %+v", d.Rules)
	}
	choice, ok := d.Schema.Property("choice")
	if !ok || choice.Types != TypeInteger || *choice.Minimum != 0 || choice.ChoicesFrom == nil ||
		*choice.ChoicesFrom != (ChoicesFrom{Rel: "about", Field: "options"}) {
		t.Fatalf("schema %+v", d.Schema)
	}
	if got := d.Schema.Validate(parse(t, `{"choice":2}`)); got != nil {
		t.Fatalf("a vote for choice 2 fits: %v", got)
	}
	wantIssues(t, d.Schema.Validate(parse(t, `{"choice":-1.5}`)), "schema/type $.choice", "schema/minimum $.choice")
}

// 02 §7.3: the three onePer keys of the example.
func TestSpecOnePerKeys(t *testing.T) {
	var vec struct {
		Space string
		Vote  struct {
			Collection string
			OnePer     []string
			Root       string
			LinkAbout  string `json:"link_about"`
			Key        string
		} `json:"vote_public"`
		Decision struct {
			Collection string
			OnePer     []string
			LinkAbout  string `json:"link_about"`
			Key        string
		} `json:"decision_public"`
		Private struct {
			K0  string `json:"k0_hex"`
			Key string
		} `json:"vote_private"`
	}
	if err := json.Unmarshal(specVectors(t)["onePer_02_7_3"], &vec); err != nil {
		t.Fatal(err)
	}
	parts := func(ss []string) []Part {
		out := make([]Part, len(ss))
		for i, s := range ss {
			out[i] = parsePart(s)
		}
		return out
	}
	pub := PublicOneKey(vec.Space)
	vote := Content{Links: []record.Link{{Rel: "about", To: vec.Vote.LinkAbout}}}

	got, err := OnePerKey(pub, vec.Vote.Collection, parts(vec.Vote.OnePer), vec.Vote.Root, vote)
	if err != nil || got != vec.Vote.Key || got != testOwner+".one:a91e596711387286109b7a5b7f6d511b2620458a" {
		t.Fatalf("public vote: %s, %v; want %s", got, err, vec.Vote.Key)
	}
	decision := Content{Links: []record.Link{{Rel: "about", To: vec.Decision.LinkAbout}}}
	got, err = OnePerKey(pub, vec.Decision.Collection, parts(vec.Decision.OnePer), vec.Vote.Root, decision)
	if err != nil || got != vec.Decision.Key || got != "one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a" {
		t.Fatalf("public decision: %s, %v; want %s", got, err, vec.Decision.Key)
	}
	k0, _ := hex.DecodeString(vec.Private.K0)
	priv, err := PrivateOneKey(k0)
	if err != nil {
		t.Fatal(err)
	}
	got, err = OnePerKey(priv, vec.Vote.Collection, parts(vec.Vote.OnePer), vec.Vote.Root, vote)
	if err != nil || got != vec.Private.Key {
		t.Fatalf("private vote: %s, %v; want %s", got, err, vec.Private.Key)
	}

	// The same through the std.vote definition, and the key forms §4.1 reads.
	d := mustDef(t, stdVote)
	if got, _ := d.OnePerKey(pub, vec.Vote.Root, vote); got != vec.Vote.Key {
		t.Fatalf("std.vote definition derives %s", got)
	}
	if form, withAuthor := record.IsOnePerForm(vec.Vote.Key); !form || !withAuthor {
		t.Fatal("the vote's key is not an owned onePer form")
	}
	if form, withAuthor := record.IsOnePerForm(vec.Decision.Key); !form || withAuthor {
		t.Fatal("the decision's key is not a shared onePer form")
	}
}

// 02 §8.3: the two tags of the example.
func TestSpecTags(t *testing.T) {
	var vec struct {
		Space   string
		Channel struct{ Collection, Topic, Value, Tag string }
		LinkIn  struct{ Collection, Topic, Value, Tag string } `json:"link_in"`
	}
	if err := json.Unmarshal(specVectors(t)["tags_02_8_3"], &vec); err != nil {
		t.Fatal(err)
	}
	k := PublicTagKey(vec.Space)
	got, err := Tag(k, vec.Channel.Collection, vec.Channel.Topic, vec.Channel.Value)
	if err != nil || got != vec.Channel.Tag || got != "Hh5Cwzt8mQlIfYWE_cPjkA" {
		t.Fatalf("channel tag %s, %v", got, err)
	}
	got, err = Tag(k, vec.LinkIn.Collection, vec.LinkIn.Topic, vec.LinkIn.Value)
	if err != nil || got != vec.LinkIn.Tag || got != "FfavMdkS1rv7FcKY9sNSoA" {
		t.Fatalf("link tag %s, %v", got, err)
	}

	// Through definitions, from a body and from links.
	chat := def(t, "app.chat.message", `"topics":["channel"]`)
	tags, err := chat.Tags(k, Content{Body: parse(t, `{"channel":"design","text":"hi"}`)})
	if err != nil || len(tags) != 1 || tags[0] != vec.Channel.Tag {
		t.Fatalf("chat tags %v, %v", tags, err)
	}
	msg := def(t, "std.message", `"topics":["link:in"]`)
	tags, err = msg.Tags(k, Content{Body: parse(t, `{}`), Links: []record.Link{{Rel: "in", To: vec.LinkIn.Value}}})
	if err != nil || len(tags) != 1 || tags[0] != vec.LinkIn.Tag {
		t.Fatalf("message tags %v, %v", tags, err)
	}
}
