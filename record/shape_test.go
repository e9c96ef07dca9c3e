package record

import (
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// Each check of 02 §4.6 refuses what it should, with its code; the version
// it is made on passes.
func TestShapeChecks(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{"text":"a"}`)
	b := next(t, k, a, 1, a.ID, `{"text":"b"}`)
	del := resign(t, k, next(t, k, b, 2, b.ID, `null`), func(o *canonical.Object) {
		o.Set("deleted", true)
		o.Set("body", nil)
	})
	for _, v := range []*Version{a, b, del} {
		if _, err := Decode(mustJSON(t, v)); err != nil {
			t.Fatalf("valid version refused: %v", err)
		}
	}
	set := func(name string, val any) func(o *canonical.Object) {
		return func(o *canonical.Object) { o.Set(name, val) }
	}
	drop := func(name string) func(o *canonical.Object) {
		return func(o *canonical.Object) { o.Delete(name) }
	}
	cases := []struct {
		name string
		v    *Version
		f    func(o *canonical.Object)
		code string
	}{
		{"not an object", a, nil, CodeNotObject},
		{"#1 key upper case", a, set("key", "Abc"), CodeKey},
		{"#1 key too long", a, set("key", strings.Repeat("a", 129)), CodeKey},
		{"#1 key empty", a, set("key", ""), CodeKey},
		{"#1 key a number", a, set("key", 1.0), CodeKey},
		{"#1 key absent", a, drop("key"), CodeKey},
		{"#2 seq negative", a, set("seq", -1.0), CodeSeq},
		{"#2 seq fraction", a, set("seq", 1.5), CodeSeq},
		{"#2 seq 2^53", a, set("seq", float64(1<<53)), CodeSeq},
		{"#2 seq a string", a, set("seq", "0"), CodeSeq},
		{"#2 seq absent", a, drop("seq"), CodeSeq},
		{"#3 seq 0 with prev", a, set("prev", b.ID), CodeFirst},
		{"#3 seq 0 with genesis", a, set("genesis", a.ID), CodeFirst},
		{"#4 seq 1 without prev", b, drop("prev"), CodeLater},
		{"#4 seq 1 without genesis", b, drop("genesis"), CodeLater},
		{"#4 prev not a string", b, set("prev", 1.0), CodeLater},
		{"#4 prev is own id", b, func(o *canonical.Object) { id, _ := o.Get("id"); o.Set("prev", id) }, CodeLater},
		{"#4 genesis is own id", b, func(o *canonical.Object) { id, _ := o.Get("id"); o.Set("genesis", id) }, CodeLater},
		{"#5 seen not a list", a, set("seen", "x"), CodeSeen},
		{"#5 seen 65 ids", a, set("seen", strs(65, "b")), CodeSeen},
		{"#5 seen an empty id", a, set("seen", []any{""}), CodeSeen},
		{"#5 seen an id of 129", a, set("seen", []any{strings.Repeat("b", 129)}), CodeSeen},
		{"#5 seen a number", a, set("seen", []any{1.0}), CodeSeen},
		{"#6 deleted false", a, set("deleted", false), CodeFlag},
		{"#6 retain 1", a, set("retain", 1.0), CodeFlag},
		{"#7 delete with a body", del, set("body", canonical.NewObject()), CodeDelete},
		{"#7 delete with bodyHash", del, set("bodyHash", a.BodyHash), CodeDelete},
		{"#7 no bodyHash", a, drop("bodyHash"), CodeBodyHash},
		{"#7 bodyHash empty", a, set("bodyHash", ""), CodeBodyHash},
		{"#7 bodyHash 129", a, set("bodyHash", strings.Repeat("b", 129)), CodeBodyHash},
		{"#8 links not a list", a, set("links", canonical.NewObject()), CodeLinks},
		{"#8 link extra member", a, set("links", []any{canonical.NewObject("rel", "about", "to", "x", "n", 1.0)}), CodeLinks},
		{"#8 link bad rel", a, set("links", []any{canonical.NewObject("rel", "About", "to", "x")}), CodeLinks},
		{"#8 link to a version id", a, set("links", []any{canonical.NewObject("rel", "about", "to", "B")}), CodeLinks},
		{"#8 33 links", a, set("links", links(33)), CodeLinks},
		{"#10 retained stub", a, func(o *canonical.Object) { o.Set("retain", true); o.Delete("body") }, CodeRetainStub},
		{"#11 space without log", a, drop("log"), CodeLog},
		{"#11 log not an object", a, set("log", 0.0), CodeLog},
		{"#11 log extra member", a, set("log", canonical.NewObject("n", 0.0, "x", 1.0)), CodeLog},
		{"#11 log without n", a, set("log", canonical.NewObject()), CodeLog},
		{"#11 log n negative", a, set("log", canonical.NewObject("n", -1.0)), CodeLog},
		{"#11 log prev at 0", a, set("log", canonical.NewObject("n", 0.0, "prev", "x")), CodeLog},
		{"#11 log n 1 without prev", a, set("log", canonical.NewObject("n", 1.0)), CodeLog},
		{"#11 log prev own id", a, func(o *canonical.Object) {
			id, _ := o.Get("id")
			o.Set("log", canonical.NewObject("n", 1.0, "prev", id))
		}, CodeLog},
		{"#11 log prev 129", a, set("log", canonical.NewObject("n", 1.0, "prev", strings.Repeat("x", 129))), CodeLog},
		{"tags 65", a, set("tags", strs(65, "t")), CodeTags},
		{"tags a number", a, set("tags", []any{1.0}), CodeTags},
		{"no author", a, drop("author"), CodeMember},
		{"collection a number", a, set("collection", 1.0), CodeMember},
		{"no signature", a, drop("signature"), CodeMember},
		{"no id", a, drop("id"), CodeMember},
		{"no createdAt", a, drop("createdAt"), CodeMember},
		{"proof a list", a, set("proof", []any{}), CodeMember},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var data []byte
			if c.f == nil {
				data = []byte(`[1]`)
			} else {
				data = mutate(t, c.v, c.f)
			}
			_, err := Decode(data)
			refusedWith(t, err, c.code)
		})
	}
	// Bounds that pass: 64 seen, 32 links, 64 tags, seq 2^53 − 1.
	for _, f := range []func(o *canonical.Object){
		set("seen", strs(64, "b")), set("links", links(32)), set("tags", strs(64, "t")),
		set("log", canonical.NewObject("n", float64(MaxSafeInteger), "prev", "x")),
	} {
		if _, err := Decode(mutate(t, a, f)); err != nil {
			t.Errorf("a version at a limit refused: %v", err)
		}
	}
	big := resign(t, k, b, func(o *canonical.Object) { o.Set("seq", float64(MaxSafeInteger)) })
	if big.Seq != MaxSafeInteger {
		t.Fatal("seq 2^53 − 1 refused")
	}
	// A delete may omit its body, or carry null.
	if _, err := Decode(mutate(t, del, drop("body"))); err != nil {
		t.Fatalf("a delete without body refused: %v", err)
	}
}

// §4.6 #9: the body hashes to bodyHash; checked by Verify, first.
func TestBodyHashCheck(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{"text":"a"}`)
	other, _ := Decode(mutate(t, a, func(o *canonical.Object) { o.Set("body", canonical.NewObject("text", "b")) }))
	refusedWith(t, (&Verifier{}).Verify(other), CodeBody)
	// Member order and number form in the body do not matter.
	same, err := Decode([]byte(strings.Replace(string(mustJSON(t, a)), `"body":{"text":"a"}`, `"body": { "text" : "a" }`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Verifier{}).Verify(same); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownMembersAreKeptAndHashed(t *testing.T) {
	k := mustKey(t)
	o := obj(t, `{"collection":"app.x","createdAt":"2026-09-26T12:00:00.000Z","space":"`+testSpace+`","seq":0,"log":{"n":0},"body":{},"futureField":{"z":[1,2,{"é":"\ud800"}]},"zz":null}`)
	key, _ := FreshKey(k.DID())
	o.Set("key", key)
	v, err := Sign(o, k)
	if err != nil {
		t.Fatal(err)
	}
	data := mustJSON(t, v)
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Verifier{}).Verify(back); err != nil {
		t.Fatalf("a version with unknown members does not verify: %v", err)
	}
	if !back.Object().Has("futureField") || !back.Object().Has("zz") {
		t.Fatal("unknown members dropped")
	}
	out, _ := back.MarshalJSON()
	if string(out) != string(data) {
		t.Fatalf("re-encoded differently:\n%s\n%s", out, data)
	}
	// Dropping the unknown member changes the id: it was signed.
	dropped, _ := Decode(mutate(t, back, func(o *canonical.Object) { o.Delete("zz") }))
	refusedWith(t, (&Verifier{}).Verify(dropped), CodeID)
}

func mustJSON(t testing.TB, v *Version) []byte {
	t.Helper()
	b, err := v.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func strs(n int, prefix string) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = prefix + strings.Repeat("x", i%5) + string(rune('a'+i%26))
	}
	return out
}

func links(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = canonical.NewObject("rel", "about", "to", "key."+string(rune('a'+i%26)))
	}
	return out
}
