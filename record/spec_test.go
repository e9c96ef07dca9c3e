package record

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// 02 §3.4: the id recomputed from the signed part, the bodyHash, and the
// given signature verifying against the author's did:key.
func TestSpecExample34(t *testing.T) {
	v, err := Decode(specVersionJSON(t))
	if err != nil {
		t.Fatal(err)
	}
	signed, err := v.SignedPart()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"author":"did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E","bodyHash":"b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq","collection":"app.todo.item","createdAt":"2026-09-26T12:00:00.000Z","key":"akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa","links":[{"rel":"about","to":"list.groceries"}],"log":{"n":0},"seen":["b2adwpfsyvp6w5qyvo54kgtomdh4iqdg5xhrwwyva7qq54lh74gpq"],"seq":0,"space":"bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a"}`
	if string(signed) != want {
		t.Fatalf("signed part\n got %s\nwant %s", signed, want)
	}
	if id := canonical.IDOf(signed).String(); id != v.ID || id != "bvtkn4kg5z6qhfqvovhxypxvm767aqz6llyd67wztupdwixpfl7xa" {
		t.Fatalf("id %s", id)
	}
	if h, _ := BodyHash(v.Body); h != v.BodyHash {
		t.Fatalf("bodyHash %s, want %s", h, v.BodyHash)
	}
	vf := &Verifier{}
	if err := vf.Verify(v); err != nil {
		t.Fatalf("the §3.4 version does not verify: %v", err)
	}
	// Its stub: same id and signature, still verifies (§4.5).
	if err := vf.Verify(v.Stub()); err != nil {
		t.Fatalf("stub: %v", err)
	}
	// It is its root's first version at a fresh key of its own (§4.1).
	if err := CheckFirstKey(v, v.Author); err != nil {
		t.Fatal(err)
	}
}

// 02 §4.1: the owner part and the key forms.
func TestSpecOwnerPart(t *testing.T) {
	b, _ := os.ReadFile("../testdata/spec-vectors.json")
	var vec struct {
		O struct {
			Root, Owner string
			Chosen      string `json:"chosen_settings"`
		} `json:"owner_02_4_1"`
	}
	json.Unmarshal(b, &vec)
	if got := OwnerPart(vec.O.Root); got != vec.O.Owner || got != "akthxqofxox3iszhpi5j3zhl6a" {
		t.Fatalf("owner part %s", got)
	}
	if got, err := ChosenKey(vec.O.Root, "settings"); err != nil || got != vec.O.Chosen {
		t.Fatalf("chosen key %s, %v", got, err)
	}
	fresh, err := FreshKey(vec.O.Root)
	if err != nil || !strings.HasPrefix(fresh, "akthxqofxox3iszhpi5j3zhl6a.") || len(fresh) != 26+1+26 || KindOf(fresh) != KindOwned {
		t.Fatalf("fresh key %s (%v)", fresh, err)
	}
	other, _ := FreshKey(vec.O.Root)
	if other == fresh {
		t.Fatal("two fresh keys are equal")
	}
	forms := map[string]KeyKind{
		"akthxqofxox3iszhpi5j3zhl6a.mfrggzdfmztwq2lknnwg23tpoa":                   KindOwned,
		"akthxqofxox3iszhpi5j3zhl6a.settings":                                     KindOwned,
		"akthxqofxox3iszhpi5j3zhl6a.one:a91e596711387286109b7a5b7f6d511b2620458a": KindOwned,
		"one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a":                            KindShared,
		"one:A1452e7523f8d551ce60f1a9f265a1878fa6b97a":                            KindOther,
		"one:a1452e7523f8d551ce60f1a9f265a1878fa6b97":                             KindOther,
		"collection:app.poll":                                                     KindOther,
		"akthxqofxox3iszhpi5j3zhl6a.":                                             KindOther,
		"akthxqofxox3iszhpi5j3zhl61.x":                                            KindOther,
		"list.groceries":                                                          KindOther,
		"akthxqofxox3iszhpi5j3zhl6a." + strings.Repeat("x", 101):                  KindOwned,
		"akthxqofxox3iszhpi5j3zhl6a." + strings.Repeat("x", 102):                  KindOther,
	}
	for k, want := range forms {
		if got := KindOf(k); got != want {
			t.Errorf("KindOf(%s) = %v, want %v", k, got, want)
		}
	}
	if op, author := IsOnePerForm("akthxqofxox3iszhpi5j3zhl6a.one:a91e596711387286109b7a5b7f6d511b2620458a"); !op || !author {
		t.Error("owned onePer form not recognised")
	}
	if op, author := IsOnePerForm("one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a"); !op || author {
		t.Error("shared onePer form not recognised")
	}
	if op, _ := IsOnePerForm("akthxqofxox3iszhpi5j3zhl6a.settings"); op {
		t.Error("a chosen key taken for a onePer form")
	}
	if _, err := ChosenKey(vec.O.Root, "Settings"); err == nil {
		t.Error("a chosen name with upper case accepted")
	}
	if _, err := ChosenKey(vec.O.Root, strings.Repeat("a", 102)); err == nil {
		t.Error("a chosen name of 102 characters accepted")
	}
}

// 02 §4.7's example: A (seq 0), B (seq 1, prev A, genesis A); seq 2 after B
// with genesis A follows B; seq 9 is refused (3), genesis B is refused (4).
func TestSpecChainExample(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{"text":"a"}`)
	b := next(t, k, a, 1, a.ID, `{"text":"b"}`)
	if b.Prev != a.ID || b.Genesis != a.ID || b.Seq != 1 {
		t.Fatalf("B = seq %d prev %s genesis %s", b.Seq, b.Prev, b.Genesis)
	}
	if err := CheckChain(b, a); err != nil {
		t.Fatal(err)
	}
	c := next(t, k, b, 2, b.ID, `{"text":"c"}`)
	if c.Genesis != a.ID {
		t.Fatal("genesis of seq 2 is not A")
	}
	if err := CheckChain(c, b); err != nil {
		t.Fatalf("seq 2 after B: %v", err)
	}
	if err := CheckGenesis(c, a); err != nil {
		t.Fatalf("genesis A: %v", err)
	}
	signWith := func(f func(o *canonical.Object)) *Version {
		o := obj(t, `{"collection":"app.todo.item","createdAt":"2026-09-26T12:02:00.000Z","space":"`+testSpace+`","body":{}}`)
		NextAfter(b).Apply(o)
		o.Set("log", logValue(2, b.ID))
		f(o)
		v, err := Sign(o, k)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	nine := signWith(func(o *canonical.Object) { o.Set("seq", 9.0) })
	refusedWith(t, CheckChain(nine, b), CodeChainSeq)
	wrongGenesis := signWith(func(o *canonical.Object) { o.Set("genesis", b.ID) })
	refusedWith(t, CheckChain(wrongGenesis, b), CodeChainGenesis)
	otherKey := signWith(func(o *canonical.Object) { o.Set("key", "akthxqofxox3iszhpi5j3zhl6a.other") })
	refusedWith(t, CheckChain(otherKey, b), CodeChainKey)
	moved := signWith(func(o *canonical.Object) { o.Set("collection", "app.other") })
	refusedWith(t, CheckChain(moved, b), CodeChainCollection)
	// The genesis it names must be this record's first version.
	refusedWith(t, CheckGenesis(c, b), CodeChainFirst)
	elsewhere := first(t, k, "app.other", 0, `{}`)
	fake := *c
	fake.Genesis = elsewhere.ID
	refusedWith(t, CheckGenesis(&fake, elsewhere), CodeChainFirst)
	if err := CheckChain(c, a); err == nil {
		t.Fatal("CheckChain accepted a version prev does not name")
	}
}

// 02 §4.10's example: K writes v0 and v1 in app.chat; a copy of K writes w1
// at place 1 there too. v1 and w1 are a fork; a version of K in app.photos
// is in another line.
func TestSpecForkExample(t *testing.T) {
	k := mustKey(t)
	v0 := first(t, k, "app.chat", 0, `{"text":"v0"}`)
	v1 := firstAt(t, k, "app.chat", 1, v0.ID, `{"text":"v1"}`)
	w1 := firstAt(t, k, "app.chat", 1, v0.ID, `{"text":"w1"}`)
	photo := first(t, k, "app.photos", 0, `{}`)

	proof, ok := Fork(v1, w1)
	if !ok || proof.Kind != "fork" || proof.From() != 1 {
		t.Fatalf("no fork found: %v", proof)
	}
	if p2, _ := Fork(w1, v1); p2.A.ID != proof.A.ID {
		t.Fatal("the proof depends on the order the pair was found in")
	}
	if proof.A.HasBody || proof.B.HasBody {
		t.Fatal("a proof carries bodies")
	}
	if _, ok := Fork(v0, v1); ok {
		t.Fatal("v0 and v1 are not a fork")
	}
	if _, ok := Fork(v0, photo); ok {
		t.Fatal("versions in two collections are not a fork")
	}
	if _, ok := Fork(v1, v1); ok {
		t.Fatal("a version is not a fork with itself")
	}
	// The proof travels and checks everywhere.
	b, _ := canonical.Marshal(proof.Value())
	val, _ := canonical.Parse(b)
	back, err := ParseLineProof(val, &Verifier{})
	if err != nil || back.Kind != "fork" || back.Line() != proof.Line() {
		t.Fatalf("proof does not check: %v", err)
	}
	// A break: log.prev naming another collection's version.
	brk := firstAt(t, k, "app.chat", 2, photo.ID, `{}`)
	bp, ok := Break(brk, photo)
	if !ok || bp.Kind != "break" || bp.From() != 2 {
		t.Fatal("break not found")
	}
	if _, err := ParseLineProof(bp.Value(), &Verifier{}); err != nil {
		t.Fatal(err)
	}
	// Not one place before.
	skip := firstAt(t, k, "app.chat", 3, v0.ID, `{}`)
	if _, ok := Break(skip, v0); !ok {
		t.Fatal("a log.prev two places back is a break")
	}
	if _, ok := Break(v1, v0); ok {
		t.Fatal("v1 after v0 is no break")
	}
	// Someone else's key.
	other := mustKey(t)
	o1 := firstAt(t, other, "app.chat", 1, v0.ID, `{}`)
	if _, ok := Break(o1, v0); !ok {
		t.Fatal("a log.prev naming another key's version is a break")
	}
	// A forged pair proves nothing.
	forged := proof.Value()
	vs, _ := forged.Get("versions")
	bad := vs.([]any)[1].(*canonical.Object).Clone()
	bad.Set("signature", v0.Signature)
	forged.Set("versions", []any{vs.([]any)[0], bad})
	if _, err := ParseLineProof(forged, &Verifier{}); err == nil {
		t.Fatal("a proof with a bad signature checks")
	}
}

func resign(t testing.TB, k interface {
	DID() string
	Sign([]byte) ([]byte, error)
}, v *Version, f func(o *canonical.Object)) *Version {
	t.Helper()
	o := v.Object().Clone()
	f(o)
	out, err := Sign(o, k)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// 02 §4.10: "Either may be a stub." A fork of a line whose versions carry
// retain (the access history, history "all") is proven by their stubs:
// the envelopes quoted in a proof are read with every check of §4.6 but
// #10, which refuses a retained version that travels as a stub — and still
// does, for the stub sent alone.
func TestSpecForkOfRetainedVersionsQuotesStubs(t *testing.T) {
	k := mustKey(t)
	keep := func(v *Version) *Version { return resign(t, k, v, func(o *canonical.Object) { o.Set("retain", true) }) }
	v1 := keep(firstAt(t, k, "app.log", 1, "bprevious", `{"text":"v1"}`))
	w1 := keep(firstAt(t, k, "app.log", 1, "bprevious", `{"text":"w1"}`))
	proof, ok := Fork(v1, w1)
	if !ok || !proof.A.Retain || proof.A.HasBody {
		t.Fatal("the proof quotes the retained versions as stubs")
	}
	b, _ := canonical.Marshal(proof.Value())
	val, _ := canonical.Parse(b)
	if back, err := ParseLineProof(val, &Verifier{}); err != nil || back.From() != 1 {
		t.Fatalf("a proof of retained versions does not check: %v", err)
	}
	sb, _ := proof.A.MarshalJSON()
	_, err := Decode(sb)
	refusedWith(t, err, CodeRetainStub)
	// Quoted, every other check holds: a stub that is not a later version
	// when it names a prev is refused in a proof too.
	bad := proof.Value()
	vs, _ := bad.Get("versions")
	mangled := vs.([]any)[0].(*canonical.Object).Clone()
	mangled.Set("prev", "bsomething")
	bad.Set("versions", []any{mangled, vs.([]any)[1]})
	if _, err := ParseLineProof(bad, &Verifier{}); err == nil {
		t.Fatal("a quoted version that fails §4.6 checks")
	}
}
