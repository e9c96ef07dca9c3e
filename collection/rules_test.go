package collection

import (
	"errors"
	"strings"
	"testing"

	"github.com/minca-go/minca/record"
)

const (
	voteKey     = testOwner + ".one:a91e596711387286109b7a5b7f6d511b2620458a"
	decisionKey = "one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a"
	pollKey     = testOwner + ".poll"
	aboutPoll   = `"links":[{"rel":"about","to":"` + pollKey + `"}]`
	freshKey    = testOwner + ".mfrggzdfmztwq2lknnwg23tpoa"
)

func decisionDef(t *testing.T) *Definition {
	return def(t, "std.decision", `"rules":{"onePer":["link:about"]}`)
}

// 02 §4.1: a onePer key's form only where a matching onePer is in force.
func TestCheckKeyForm(t *testing.T) {
	vote, decision := mustDef(t, stdVote), decisionDef(t)
	owned := ver(t, `"collection":"std.vote","key":"`+voteKey+`","body":{}`)
	shared := ver(t, `"collection":"std.decision","key":"`+decisionKey+`","body":{}`)

	// Passes: the form its rule gives; a key of no onePer form; later versions; sys.*; can't read.
	for _, c := range []struct {
		v  *record.Version
		in InForce
	}{
		{owned, Defined(vote)},
		{shared, Defined(decision)},
		{ver(t, `"collection":"std.vote","key":"`+freshKey+`","body":{}`), Defined(vote)},
		{ver(t, `"collection":"app.notes","key":"`+freshKey+`","body":{}`), InForce{}},
		{ver(t, `"collection":"std.vote","key":"`+decisionKey+`","seq":1,"body":{}`), Defined(vote)},
		{ver(t, `"collection":"app.notes","key":"`+voteKey+`","body":{}`), Unreadable()},
	} {
		if err := CheckKeyForm(c.v, c.in); err != nil {
			t.Fatalf("%s at %s: %v", c.v.Collection, c.v.Key, err)
		}
	}
	// Fails: the other form, no onePer, no definition at all.
	wantRefusal(t, CheckKeyForm(ver(t, `"collection":"std.vote","key":"`+decisionKey+`","body":{}`), Defined(vote)), CodeKeyOnePer)
	wantRefusal(t, CheckKeyForm(ver(t, `"collection":"std.decision","key":"`+voteKey+`","body":{}`), Defined(decision)), CodeKeyOnePer)
	wantRefusal(t, CheckKeyForm(ver(t, `"collection":"app.notes","key":"`+voteKey+`","body":{}`), Defined(def(t, "app.notes", `"rules":{"fixed":["a"]}`))), CodeKeyOnePer)
	wantRefusal(t, CheckKeyForm(ver(t, `"collection":"app.notes","key":"`+decisionKey+`","body":{}`), InForce{}), CodeKeyOnePer)
	// A definition of another collection is the caller's mistake.
	if err := CheckKeyForm(owned, Defined(decision)); !errors.Is(err, ErrWrongDefinition) {
		t.Fatalf("%v", err)
	}
}

// 02 §7.4: final refuses every seq > 0, deletes included.
func TestCheckFinal(t *testing.T) {
	final := Defined(def(t, "app.proof", `"rules":{"final":true}`))
	if err := CheckFinal(ver(t, `"collection":"app.proof","key":"`+freshKey+`","body":{}`), final); err != nil {
		t.Fatal(err)
	}
	if err := CheckFinal(ver(t, `"collection":"app.proof","key":"`+freshKey+`","seq":1,"body":{}`), Defined(def(t, "app.proof", ""))); err != nil {
		t.Fatal(err)
	}
	if err := CheckFinal(ver(t, `"collection":"app.proof","key":"`+freshKey+`","seq":1,"body":{}`), Unreadable()); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, CheckFinal(ver(t, `"collection":"app.proof","key":"`+freshKey+`","seq":1,"body":{}`), final), CodeRuleFinal)
	wantRefusal(t, CheckFinal(ver(t, `"collection":"app.proof","key":"`+freshKey+`","seq":2,"deleted":true,"body":null`), final), CodeRuleFinal)
}

// 02 §4.5: which versions a writer retains, and which a peer refuses without.
func TestRetain(t *testing.T) {
	onePer, fixed := Defined(mustDef(t, stdVote)), Defined(def(t, "app.poll", `"rules":{"fixed":["options"]}`))
	all, plain := Defined(def(t, "app.log", `"history":"all"`)), Defined(def(t, "app.log", ""))
	for _, c := range []struct {
		coll    string
		seq     int64
		deleted bool
		in      InForce
		want    bool
	}{
		{"sys.role", 3, false, InForce{}, true},
		{"sys.collection", 1, true, InForce{}, true},
		{"sys.profile", 0, false, InForce{}, false},
		{"app.log", 5, false, all, true},
		{"app.log", 5, true, all, true},
		{"app.log", 0, false, plain, false},
		{"app.log", 0, false, InForce{}, false},
		{"std.vote", 0, false, onePer, true},
		{"std.vote", 1, false, onePer, false},
		{"app.poll", 0, false, fixed, true},
		{"app.poll", 0, true, fixed, false},
		{"app.poll", 0, false, Unreadable(), true},
	} {
		if got := WriterMustRetain(c.coll, c.seq, c.deleted, c.in); got != c.want {
			t.Errorf("%s seq %d deleted %v: writer retains %v, want %v", c.coll, c.seq, c.deleted, got, c.want)
		}
	}
	// Peers refuse: access collections, seq 0 under onePer or fixed.
	wantRefusal(t, CheckRetain(ver(t, `"collection":"sys.role","key":"role:admin","body":{}`), InForce{}), CodeRuleRetain)
	wantRefusal(t, CheckRetain(ver(t, `"collection":"std.vote","key":"`+voteKey+`","body":{}`), onePer), CodeRuleRetain)
	wantRefusal(t, CheckRetain(ver(t, `"collection":"app.poll","key":"`+freshKey+`","body":{}`), fixed), CodeRuleRetain)
	// And not: retained; later versions; history all; a delete; no definition; can't read.
	for _, c := range []struct {
		v  *record.Version
		in InForce
	}{
		{ver(t, `"collection":"sys.role","key":"role:admin","retain":true,"body":{}`), InForce{}},
		{ver(t, `"collection":"std.vote","key":"`+voteKey+`","retain":true,"body":{}`), onePer},
		{ver(t, `"collection":"std.vote","key":"`+voteKey+`","seq":1,"body":{}`), onePer},
		{ver(t, `"collection":"app.log","key":"`+freshKey+`","seq":3,"body":{}`), all},
		{ver(t, `"collection":"app.poll","key":"`+freshKey+`","deleted":true`), fixed},
		{ver(t, `"collection":"app.poll","key":"`+freshKey+`","body":{}`), InForce{}},
		{ver(t, `"collection":"app.poll","key":"`+freshKey+`","body":{}`), Unreadable()},
	} {
		if err := CheckRetain(c.v, c.in); err != nil {
			t.Errorf("%s seq %d: %v", c.v.Collection, c.v.Seq, err)
		}
	}
}

// 02 §7.3: a first version is at its derived key, or refused.
func TestCheckOnePer(t *testing.T) {
	vote, decision := Defined(mustDef(t, stdVote)), Defined(decisionDef(t))
	k := PublicOneKey(testSpace)
	good := ver(t, `"collection":"std.vote","key":"`+voteKey+`","retain":true,"body":{"choice":1},`+aboutPoll)
	if err := CheckOnePer(good, testRoot, PublicContent(good), &k, vote); err != nil {
		t.Fatal(err)
	}
	gooddec := ver(t, `"collection":"std.decision","key":"`+decisionKey+`","retain":true,"body":{},`+aboutPoll)
	if err := CheckOnePer(gooddec, "did:key:zSomeoneElse", PublicContent(gooddec), &k, decision); err != nil {
		t.Fatalf("a shared key is anyone's: %v", err)
	}
	// Another root's vote at this key.
	wantRefusal(t, CheckOnePer(good, "did:key:zDnaeSomeoneElse", PublicContent(good), &k, vote), CodeRuleOnePer)
	// About another poll.
	other := ver(t, `"collection":"std.vote","key":"`+voteKey+`","retain":true,"body":{},"links":[{"rel":"about","to":"`+testOwner+`.poll2"}]`)
	wantRefusal(t, CheckOnePer(other, testRoot, PublicContent(other), &k, vote), CodeRuleOnePer)
	// No link about: no key, and the refusal names the part.
	none := ver(t, `"collection":"std.vote","key":"`+voteKey+`","retain":true,"body":{}`)
	err := CheckOnePer(none, testRoot, PublicContent(none), &k, vote)
	wantRefusal(t, err, CodeRuleOnePer)
	if r := err.(*record.Refusal); !contains(r.Message, "link:about") {
		t.Fatal(r.Message)
	}
	// Not checked: later versions, deletes, unreadable bodies, no oneKey, no onePer.
	later := ver(t, `"collection":"std.vote","key":"`+decisionKey+`","seq":1,"body":{}`)
	del := ver(t, `"collection":"std.vote","key":"`+decisionKey+`","deleted":true`)
	for _, c := range []struct {
		v  *record.Version
		c  *Content
		k  *OneKey
		in InForce
	}{
		{later, PublicContent(later), &k, vote},
		{del, &Content{}, &k, vote},
		{none, nil, &k, vote},
		{none, PublicContent(none), nil, vote},
		{none, PublicContent(none), &k, Unreadable()},
		{none, PublicContent(none), &k, InForce{}},
	} {
		if err := CheckOnePer(c.v, testRoot, c.c, c.k, c.in); err != nil {
			t.Errorf("%v", err)
		}
	}
}

// onePer field parts: canonical values, null present, absent gives no key.
func TestOnePerFields(t *testing.T) {
	k := PublicOneKey(testSpace)
	parts := []Part{{Kind: PartField, Name: "day"}, {Kind: PartField, Name: "room"}}
	a, err := OnePerKey(k, "app.booking", parts, testRoot, Content{Body: parse(t, `{"day":{"y":2026,"m":9},"room":null}`)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := OnePerKey(k, "app.booking", parts, testRoot, Content{Body: parse(t, `{"room":null,"day":{"m":9.0,"y":2026},"x":1}`)})
	if a != b || !isShared(a) {
		t.Fatalf("member order or other fields changed the key: %s %s", a, b)
	}
	c, _ := OnePerKey(k, "app.booking", parts, testRoot, Content{Body: parse(t, `{"day":{"y":2026,"m":9},"room":"null"}`)})
	d, _ := OnePerKey(k, "app.other", parts, testRoot, Content{Body: parse(t, `{"day":{"y":2026,"m":9},"room":null}`)})
	if c == a || d == a {
		t.Fatal("the string \"null\", or another collection, gives the same key")
	}
	_, err = OnePerKey(k, "app.booking", parts, testRoot, Content{Body: parse(t, `{"day":1}`)})
	var nk *NoKeyError
	if !errors.As(err, &nk) || nk.Part.Name != "room" || !errors.Is(err, ErrNoKey) || !contains(err.Error(), `"room"`) {
		t.Fatalf("%v", err)
	}
	_, err = OnePerKey(k, "app.booking", parts, testRoot, Content{Body: parse(t, `["day","room"]`)})
	if !errors.As(err, &nk) || nk.Part.Name != "day" {
		t.Fatalf("a body that is not an object has no fields: %v", err)
	}
	_, err = OnePerKey(k, "app.booking", []Part{{Kind: PartAuthor}}, "", Content{})
	if !errors.As(err, &nk) || nk.Part.Kind != PartAuthor {
		t.Fatalf("%v", err)
	}
	if _, err := PrivateOneKey(make([]byte, 31)); err == nil {
		t.Fatal("K₀ of 31 bytes")
	}
	if _, err := def(t, "app.x", "").OnePerKey(k, testRoot, Content{}); err == nil {
		t.Fatal("a definition without onePer derives a key")
	}
}

func isShared(k string) bool { form, author := record.IsOnePerForm(k); return form && !author }

// 02 §7.4: fixed fields keep their first value; absent equals absent.
func TestCheckFixed(t *testing.T) {
	in := Defined(def(t, "app.poll", `"rules":{"fixed":["options","closes"]}`))
	first := ver(t, `"id":"bfirst","collection":"app.poll","key":"`+freshKey+`","retain":true,"body":{"q":"Lunch?","options":["a",{"x":1,"y":2}]}`)
	fc := PublicContent(first)
	edit := func(body string) (*record.Version, *Content) {
		v := ver(t, `"collection":"app.poll","key":"`+freshKey+`","seq":1,"body":`+body)
		return v, PublicContent(v)
	}
	v, c := edit(`{"q":"Dinner?","options":["a",{"y":2.0,"x":1}]}`)
	if err := CheckFixed(v, c, first, fc, in); err != nil {
		t.Fatalf("same canonical value, absent equal to absent: %v", err)
	}
	v, c = edit(`{"q":"Lunch?","options":["a","b"]}`)
	wantRefusal(t, CheckFixed(v, c, first, fc, in), CodeRuleFixed)
	v, c = edit(`{"q":"Lunch?","options":["a",{"x":1,"y":2}],"closes":"friday"}`)
	wantRefusal(t, CheckFixed(v, c, first, fc, in), CodeRuleFixed)
	v, c = edit(`{"q":"Lunch?"}`)
	err := CheckFixed(v, c, first, fc, in)
	wantRefusal(t, err, CodeRuleFixed)
	if err.(*record.Refusal).Field != "body.options" {
		t.Fatal(err)
	}
	// Not compared: a first version without retain, unreadable bodies, deletes, no fixed.
	noRetain := ver(t, `"id":"bfirst","collection":"app.poll","key":"`+freshKey+`","body":{"options":[1]}`)
	if err := CheckFixed(v, c, noRetain, PublicContent(noRetain), in); err != nil {
		t.Fatal(err)
	}
	if err := CheckFixed(v, c, first, nil, in); err != nil {
		t.Fatal(err)
	}
	if err := CheckFixed(v, nil, first, fc, in); err != nil {
		t.Fatal(err)
	}
	del := ver(t, `"collection":"app.poll","key":"`+freshKey+`","seq":2,"deleted":true`)
	if err := CheckFixed(del, &Content{}, first, fc, in); err != nil {
		t.Fatal(err)
	}
	if err := CheckFixed(v, c, first, fc, Defined(def(t, "app.poll", ""))); err != nil {
		t.Fatal(err)
	}
}

// Check.Run in the reference order; sys.* and undefined collections have no rules.
func TestCheckRun(t *testing.T) {
	k, tk := PublicOneKey(testSpace), PublicTagKey(testSpace)
	vote := Defined(mustDef(t, stdVote))
	v := ver(t, `"collection":"std.vote","key":"`+voteKey+`","retain":true,"body":{"choice":1},`+aboutPoll)
	c := &Check{Version: v, Root: testRoot, Content: PublicContent(v), InForce: vote, OneKey: &k, TagKey: &tk}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	// Without retain and with a tag: tags come first (§9.4 step 4.4 before 4.5).
	bad := ver(t, `"collection":"std.vote","key":"`+voteKey+`","tags":["AAAAAAAAAAAAAAAAAAAAAA"],"body":{"choice":1},`+aboutPoll)
	c.Version, c.Content = bad, PublicContent(bad)
	wantRefusal(t, c.Run(), CodeTagMismatch)
	noRetain := ver(t, `"collection":"std.vote","key":"`+voteKey+`","body":{"choice":1},`+aboutPoll)
	c.Version, c.Content = noRetain, PublicContent(noRetain)
	wantRefusal(t, c.Run(), CodeRuleRetain)
	// A version with seq > 0 in a final collection.
	final := Defined(def(t, "app.proof", `"rules":{"final":true,"fixed":["a"]}`))
	later := ver(t, `"collection":"app.proof","key":"`+freshKey+`","seq":1,"body":{"a":2}`)
	first := ver(t, `"collection":"app.proof","key":"`+freshKey+`","retain":true,"body":{"a":1}`)
	c = &Check{Version: later, Content: PublicContent(later), First: first, FirstContent: PublicContent(first), InForce: final}
	wantRefusal(t, c.Run(), CodeRuleFinal)
	// No definition: nothing but §4.1's form check applies.
	undefined := ver(t, `"collection":"app.poll","key":"`+freshKey+`","tags":["x"],"body":{}`)
	c = &Check{Version: undefined, Content: PublicContent(undefined)}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	// sys.*: no rules from a definition, even if one is passed in by mistake.
	sys := ver(t, `"collection":"sys.profile","key":"profile:x","seq":1,"body":{}`)
	c = &Check{Version: sys, Content: PublicContent(sys), InForce: final}
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
