package seal

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/record"
)

const stdVote = `{"name":"std.vote","version":1,"schema":{"type":"object"},"links":{"about":{"to":["std.poll"],"cardinality":"one"}},"rules":{"onePer":["@author","link:about"]}}`

// 02 §7.3: with the private space key ff fe … e0 as K₀, the vote's key is
// akthxqofxox3iszhpi5j3zhl6a.one:22da47c4972f8ae73081b863a93577bd52bbe942 —
// derived from a vote sealed under K₀ and opened again, through the ring.
func TestSpecPrivateOnePer(t *testing.T) {
	var vec struct {
		Vote struct {
			Root      string
			LinkAbout string `json:"link_about"`
		} `json:"vote_public"`
		Private struct {
			K0  string `json:"k0_hex"`
			Key string
		} `json:"vote_private"`
	}
	if err := json.Unmarshal(specVectors(t)["onePer_02_7_3"], &vec); err != nil {
		t.Fatal(err)
	}
	first := k0(t)
	if hex.EncodeToString(first.Bytes()) != vec.Private.K0 {
		t.Fatal("K₀ differs from the vector's")
	}
	// Its keyId, computed apart from this package (docs/private-spaces.md).
	if first.ID() != "blcwhwmshhc35zfhx7zihekdmhg6ghydx3ryubfmdscx7u4cvc7ja" {
		t.Fatalf("K₀'s keyId %s", first.ID())
	}
	ring, err := NewKeyring(testSpace, first.ID())
	if err != nil {
		t.Fatal(err)
	}
	ring.Offer(first)

	// A member writes the vote: body and link sealed together under K₀.
	vote := collection.Content{Body: parse(t, `{"choice":1}`), Links: []record.Link{{Rel: "about", To: vec.Vote.LinkAbout}}}
	cur, err := ring.Current([]Head{{KeyID: first.ID()}})
	if err != nil {
		t.Fatal(err)
	}
	oneKey, ok := ring.OneKey()
	if !ok {
		t.Fatal("no oneKey with K₀ held")
	}
	def, err := collection.ParseDefinition(parse(t, stdVote))
	if err != nil {
		t.Fatal(err)
	}
	key, err := def.OnePerKey(oneKey, vec.Vote.Root, vote)
	if err != nil || key != vec.Private.Key || key != "akthxqofxox3iszhpi5j3zhl6a.one:22da47c4972f8ae73081b863a93577bd52bbe942" {
		t.Fatalf("the writer derives %s, %v; want %s", key, err, vec.Private.Key)
	}
	body, err := ring.SealBody(cur.ID(), "std.vote", key, vote)
	if err != nil {
		t.Fatal(err)
	}
	// A member who joins later, with a key change's chain, reads it and
	// derives the same key from what it opened.
	k1 := NewKey()
	c, err := NewKeyChange(testSpace, first.ID(), k1, ring.Keys())
	if err != nil {
		t.Fatal(err)
	}
	later, _ := NewKeyring(testSpace, first.ID())
	later.Offer(k1)
	if err := later.Take(c); err != nil {
		t.Fatal(err)
	}
	o, err := later.OpenBody("std.vote", key, body)
	if err != nil {
		t.Fatal(err)
	}
	laterOne, _ := later.OneKey()
	again, err := def.OnePerKey(laterOne, vec.Vote.Root, o.Content)
	if err != nil || again != vec.Private.Key {
		t.Fatalf("the reader derives %s, %v", again, err)
	}
	// A peer without K₀ derives nothing.
	keyless, _ := NewKeyring(testSpace, first.ID())
	if _, ok := keyless.OneKey(); ok {
		t.Fatal("a ring without K₀ has a oneKey")
	}
}

// 02 §8.2–§8.3 in a private space: the §8.3 examples' values, sealed
// under K₀, tagged under the tag key of the key they were sealed with.
// The tags are this profile's worked examples (docs/private-spaces.md),
// recomputed here from 02's formulas with the standard library alone.
func TestSpecPrivateTags(t *testing.T) {
	first := k0(t)
	ring, _ := NewKeyring(testSpace, first.ID())
	ring.Offer(first)
	ikm, _ := hkdf.Key(sha256.New, first.Bytes(), nil, "minca/topic-tags/v1", 32)
	byHand := func(coll, topic, value string) string {
		m := hmac.New(sha256.New, ikm)
		m.Write([]byte(coll + "\x00" + topic + "\x00" + `"` + value + `"`))
		return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
	}
	tk, ok := ring.TagKey(first.ID())
	if !ok {
		t.Fatal("no tag key for K₀")
	}
	for _, c := range []struct{ coll, topic, value, want string }{
		{"app.chat.message", "channel", "design", privateTagChannel},
		{"std.message", "link:in", "mfrggzdfmztwq2lknnwg23tpoa", privateTagLinkIn},
	} {
		got, err := collection.Tag(tk, c.coll, c.topic, c.value)
		if err != nil || got != byHand(c.coll, c.topic, c.value) || got != c.want {
			t.Fatalf("%s %s: %s (by hand %s), want %s", c.coll, c.topic, got, byHand(c.coll, c.topic, c.value), c.want)
		}
		if pub, _ := collection.Tag(collection.PublicTagKey(testSpace), c.coll, c.topic, c.value); pub == got {
			t.Fatal("a private tag equals the public one")
		}
	}
	// Tags follow the key a body is sealed with: under a later key, others.
	k1 := NewKey()
	t1, _ := collection.Tag(k1.TagKey(), "app.chat.message", "channel", "design")
	if t1 == privateTagChannel {
		t.Fatal("two keys give one tag")
	}
}

// The worked example tags with K₀ = ff fe … e0 (docs/private-spaces.md).
const (
	privateTagChannel = "TgmCS9mY8cfHEpVqutPZcw"
	privateTagLinkIn  = "1Wa_2upBVvBbyTlTCOHXvQ"
)
