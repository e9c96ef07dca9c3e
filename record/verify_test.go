package record

import (
	"strings"
	"testing"
	"time"

	"github.com/minca-go/minca/canonical"
)

func TestCryptoGate(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{"text":"a"}`)
	vf := &Verifier{}
	if err := vf.Verify(a); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		f    func(o *canonical.Object)
		code string
	}{
		{"envelope rewritten", func(o *canonical.Object) { o.Set("seen", []any{"bother"}) }, CodeID},
		{"retain added", func(o *canonical.Object) { o.Set("retain", true) }, CodeID},
		{"id of another", func(o *canonical.Object) { o.Set("id", "b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq") }, CodeID},
		{"id upper case", func(o *canonical.Object) { id, _ := o.Get("id"); o.Set("id", strings.ToUpper(id.(string))) }, CodeID},
		{"author not a did:key", func(o *canonical.Object) { o.Set("author", "did:web:x") }, CodeID},
		{"signature of another", func(o *canonical.Object) { o.Set("signature", strings.Repeat("A", 86)) }, CodeSignature},
		{"signature not base64url", func(o *canonical.Object) { o.Set("signature", "!!") }, CodeSignature},
		{"signature padded", func(o *canonical.Object) { s, _ := o.Get("signature"); o.Set("signature", s.(string)+"==") }, CodeSignature},
		{"body changed", func(o *canonical.Object) { o.Set("body", canonical.NewObject("text", "z")) }, CodeBody},
	}
	for _, c := range cases {
		v, err := Decode(mutate(t, a, c.f))
		if err != nil {
			t.Fatalf("%s: decode: %v", c.name, err)
		}
		refusedWith(t, vf.Verify(v), c.code)
	}
	// An author that is not a key, with an id computed to match: step 2.
	o := a.Object().Clone()
	o.Set("author", "did:key:zNotAKey")
	payload, _ := AppendSignedPart(nil, o)
	o.Set("id", canonical.IDOf(payload).String())
	v, err := FromValue(o)
	if err != nil {
		t.Fatal(err)
	}
	refusedWith(t, vf.Verify(v), CodeAuthor)
	// Another key's signature: step 3.
	other := mustKey(t)
	sigOther := resign(t, other, a, func(*canonical.Object) {})
	forged := a.Object().Clone()
	forged.Set("signature", sigOther.Signature)
	fv, _ := FromValue(forged)
	refusedWith(t, vf.Verify(fv), CodeSignature)
}

// 02 §3.2: a mangled copy arriving first does not stop the genuine one, and
// a cached verdict is applied only after steps 1 and 4 on the copy itself.
func TestVerdictCache(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{"text":"a"}`)
	cache := &VerdictCache{}
	vf := &Verifier{Cache: cache}

	sig := []byte(a.Signature)
	sig[5] ^= 'A' ^ 'B'
	mangled, _ := Decode(mutate(t, a, func(o *canonical.Object) { o.Set("signature", string(sig)) }))
	if err := vf.Verify(mangled); err == nil {
		t.Fatal("a mangled signature verified")
	}
	if cache.Len() != 0 {
		t.Fatal("a failing verdict was cached")
	}
	if err := vf.Verify(a); err != nil {
		t.Fatalf("the genuine copy after a mangled one: %v", err)
	}
	if cache.Len() != 1 {
		t.Fatal("the passing verdict was not cached")
	}
	// Same id and signature, rewritten envelope or body: still refused.
	rewritten, _ := Decode(mutate(t, a, func(o *canonical.Object) { o.Set("retain", true) }))
	refusedWith(t, vf.Verify(rewritten), CodeID)
	otherBody, _ := Decode(mutate(t, a, func(o *canonical.Object) { o.Set("body", 1.0) }))
	refusedWith(t, vf.Verify(otherBody), CodeBody)
	// The stub shares id and signature and passes from the cache.
	if err := vf.Verify(a.Stub()); err != nil {
		t.Fatal(err)
	}
	// Bounded.
	small := &VerdictCache{Size: 10}
	for i := 0; i < 100; i++ {
		small.Pass(canonical.IDOf([]byte{byte(i)}), "s")
	}
	if small.Len() > 10 {
		t.Fatalf("cache holds %d, bound 10", small.Len())
	}
}

func TestSupersedesAndNext(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{"text":"a"}`)
	b := next(t, k, a, 1, a.ID, `{"text":"b"}`)
	b2 := next(t, k, a, 2, b.ID, `{"text":"b2"}`)
	if !Supersedes(b, a) || Supersedes(a, b) {
		t.Fatal("higher seq does not win")
	}
	lo, hi := b, b2
	if hi.ID < lo.ID {
		lo, hi = hi, lo
	}
	if !Supersedes(lo, hi) || Supersedes(hi, lo) {
		t.Fatal("at equal seq the lower id does not win")
	}
	if Supersedes(a, a) {
		t.Fatal("a version supersedes itself")
	}
	// createdAt plays no part.
	late := resign(t, k, a, func(o *canonical.Object) { o.Set("createdAt", "2099-01-01T00:00:00.000Z") })
	if Supersedes(late, a) != (late.ID < a.ID) {
		t.Fatal("createdAt affected ordering")
	}
	n := NextAfter(b)
	if n.Seq != 2 || n.Prev != b.ID || n.Genesis != a.ID || n.Key != a.Key {
		t.Fatalf("next after b: %+v", n)
	}
	if n := NextAfter(a); n.Genesis != a.ID || n.Prev != a.ID {
		t.Fatalf("next after a: %+v", n)
	}
	// After a delete comes the next version, not a new seq 0 (§4.2).
	del := resign(t, k, next(t, k, b, 2, b.ID, `null`), func(o *canonical.Object) { o.Set("deleted", true) })
	if n := NextAfter(del); n.Seq != 3 || n.Prev != del.ID || n.Genesis != a.ID {
		t.Fatalf("next after a delete: %+v", n)
	}
}

type fakeNotes struct {
	issuer string
	err    error
	gotInv *Invocation
	gotAt  *time.Time
}

func (f *fakeNotes) CheckNote(note *canonical.Object, aud string, at *time.Time, inv *Invocation) (string, error) {
	f.gotInv, f.gotAt = inv, at
	return f.issuer, f.err
}

func TestCapabilityGate(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{"text":"a"}`)
	if root, err := Root(a, InvocationOf(a, testSpace, nil), nil); err != nil || root != a.Author {
		t.Fatalf("no proof: root %s, %v", root, err)
	}
	withProof := resign(t, k, a, func(o *canonical.Object) { o.Set("proof", canonical.NewObject("type", "x")) })
	refusedWith(t, func() error { _, err := Root(withProof, InvocationOf(withProof, testSpace, nil), nil); return err }(), CodeNoProof)
	notes := &fakeNotes{issuer: "did:key:zRoot"}
	root, err := Root(withProof, InvocationOf(withProof, testSpace, nil), notes)
	if err != nil || root != "did:key:zRoot" {
		t.Fatalf("root %s, %v", root, err)
	}
	if notes.gotAt != nil {
		t.Fatal("records are judged with no time (02 §9.3 step 2)")
	}
	if notes.gotInv.Cmd != CmdWrite || notes.gotInv.Space != testSpace || notes.gotInv.Collection != "app.todo.item" || !notes.gotInv.HasBody {
		t.Fatalf("invocation %+v", notes.gotInv)
	}
	badTime := resign(t, k, withProof, func(o *canonical.Object) { o.Set("createdAt", "yesterday") })
	refusedWith(t, func() error { _, err := Root(badTime, InvocationOf(badTime, testSpace, nil), notes); return err }(), CodeCreatedAt)
	del := resign(t, k, next(t, k, a, 1, a.ID, `null`), func(o *canonical.Object) {
		o.Set("deleted", true)
		o.Set("proof", canonical.NewObject("type", "x"))
	})
	if inv := InvocationOf(del, testSpace, nil); inv.Cmd != CmdDelete || inv.HasBody {
		t.Fatalf("a delete invokes %+v", inv)
	}
}

func TestLooseVersions(t *testing.T) {
	k := mustKey(t)
	key, _ := FreshKey(k.DID())
	sign := func(extra string) *Version {
		o := obj(t, `{"collection":"sys.invitation","createdAt":"2026-10-25T18:15:44.884Z","seq":0,"body":{"space":{"id":"x"}}`+extra+`}`)
		o.Set("key", key)
		v, err := Sign(o, k)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	now := time.Date(2026, 10, 25, 18, 15, 0, 0, time.UTC)
	c := &LooseChecker{Now: func() time.Time { return now }}
	v := sign("")
	if acct, err := c.Check(v, "sys.invitation"); err != nil || acct != k.DID() {
		t.Fatalf("loose: %s, %v", acct, err)
	}
	// Check 1: members a loose version must not have.
	for _, m := range []string{`,"space":"s","log":{"n":0}`, `,"seen":["b"]`, `,"retain":true`, `,"links":[]`, `,"tags":[]`} {
		refusedWith(t, func() error { _, err := c.Check(sign(m), "sys.invitation"); return err }(), CodeLooseMember)
	}
	loosedel := resign(t, k, v, func(o *canonical.Object) { o.Set("deleted", true); o.Set("body", nil) })
	refusedWith(t, func() error { _, err := c.Check(loosedel, "sys.invitation"); return err }(), CodeLooseMember)
	// Check 2.
	refusedWith(t, func() error { _, err := c.Check(v, "sys.inbox"); return err }(), CodeLooseCollection)
	refusedWith(t, func() error { _, err := c.Check(v.Stub(), "sys.invitation"); return err }(), CodeLooseBody)
	badTime := resign(t, k, v, func(o *canonical.Object) { o.Set("createdAt", "2026-10-25") })
	refusedWith(t, func() error { _, err := c.Check(badTime, "sys.invitation"); return err }(), CodeLooseCreatedAt)
	longTo := resign(t, k, v, func(o *canonical.Object) { o.Set("to", strings.Repeat("k", 129)) })
	refusedWith(t, func() error { _, err := c.Check(longTo, "sys.invitation"); return err }(), CodeLooseTo)
	okTo := resign(t, k, v, func(o *canonical.Object) { o.Set("to", strings.Repeat("k", 128)) })
	if _, err := c.Check(okTo, "sys.invitation"); err != nil {
		t.Fatal(err)
	}
	// Check 3: the crypto gate.
	forged, _ := Decode(mutate(t, v, func(o *canonical.Object) { o.Set("body", 1.0) }))
	refusedWith(t, func() error { _, err := c.Check(forged, "sys.invitation"); return err }(), CodeBody)
	// Check 4: at most 5 minutes ahead of the injected clock.
	now = time.Date(2026, 10, 25, 18, 10, 44, 884e6, time.UTC)
	if _, err := c.Check(v, "sys.invitation"); err != nil {
		t.Fatalf("exactly 5 minutes ahead: %v", err)
	}
	now = now.Add(-time.Millisecond)
	refusedWith(t, func() error { _, err := c.Check(v, "sys.invitation"); return err }(), CodeLooseFuture)
	// Check 5: the note is judged at createdAt, with no command.
	now = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	withProof := resign(t, k, v, func(o *canonical.Object) { o.Set("proof", canonical.NewObject("type", "x")) })
	refusedWith(t, func() error { _, err := c.Check(withProof, "sys.invitation"); return err }(), CodeNoProof)
	notes := &fakeNotes{issuer: "did:key:zAccount"}
	c.Notes = notes
	if acct, err := c.Check(withProof, "sys.invitation"); err != nil || acct != "did:key:zAccount" {
		t.Fatalf("with a note: %s, %v", acct, err)
	}
	if notes.gotAt == nil || !notes.gotAt.Equal(time.Date(2026, 10, 25, 18, 15, 44, 884e6, time.UTC)) || notes.gotInv != nil {
		t.Fatalf("note judged at %v with %+v", notes.gotAt, notes.gotInv)
	}
}

func TestFirstKeyChecks(t *testing.T) {
	k := mustKey(t)
	a := first(t, k, "app.todo.item", 0, `{}`)
	if err := CheckFirstKey(a, k.DID()); err != nil {
		t.Fatal(err)
	}
	other := mustKey(t)
	refusedWith(t, CheckFirstKey(a, other.DID()), CodeKeyOwner)
	at := func(coll, key string) *Version {
		return resign(t, k, a, func(o *canonical.Object) { o.Set("collection", coll); o.Set("key", key) })
	}
	refusedWith(t, CheckFirstKey(at("app.todo.item", "list.groceries"), k.DID()), CodeKeyKind)
	if err := CheckFirstKey(at("app.todo.item", "one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a"), k.DID()); err != nil {
		t.Fatalf("a shared key: %v", err)
	}
	if err := CheckFirstKey(at("sys.role", "role:admin"), k.DID()); err != nil {
		t.Fatal(err)
	}
	refusedWith(t, CheckFirstKey(at("sys.whatever", a.Key), k.DID()), CodeKeySys)
	refusedWith(t, CheckFirstKey(at("sys.role", "one:a1452e7523f8d551ce60f1a9f265a1878fa6b97a"), k.DID()), CodeKeySys)
	// Later versions keep the key they have: not checked.
	b := next(t, k, a, 1, a.ID, `{}`)
	if err := CheckFirstKey(b, other.DID()); err != nil {
		t.Fatal(err)
	}
}

func TestTimes(t *testing.T) {
	for _, s := range []string{"2026-09-26T12:00:00.000Z", "2026-09-26T12:00:00Z", "2026-09-26T14:00:00.5+02:00"} {
		if _, err := ParseTime(s); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
	for _, s := range []string{"", "2026-09-26", "yesterday", "2026-09-26 12:00:00Z", "2026-13-26T12:00:00Z"} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	if ms := UnixMillis("2026-09-26T12:00:00.123Z"); ms != 1790424000123 {
		t.Fatalf("UnixMillis = %d", ms)
	}
	if UnixMillis("nope") != 0 || UnixMillis("1960-01-01T00:00:00Z") != 0 {
		t.Fatal("unparseable or pre-1970 times are 0")
	}
}
