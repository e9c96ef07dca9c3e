package seal

import (
	"bytes"
	"crypto/hpke"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

func TestMemberKey(t *testing.T) {
	m := NewMemberKey()
	if len(m.Public().Text()) != 87 || len(m.Bytes()) != 32 {
		t.Fatalf("%q", m.Public().Text())
	}
	back, err := ParseMemberKey(m.Bytes())
	if err != nil || !back.Public().Equal(m.Public()) {
		t.Fatal(err)
	}
	pub, err := ParseMemberPublic(m.Public().Text())
	if err != nil || !pub.Equal(m.Public()) {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "AAAA", m.Public().Text()[:86], strings.Repeat("A", 87)} {
		_, err := ParseMemberPublic(bad)
		wantErr(t, err, ErrMalformed, CodeMemberKey)
	}
	if _, err := ParseMemberKey(make([]byte, 32)); err == nil {
		t.Fatal("the zero scalar is a member key")
	}

	// Derived: the same from the same secret and space, another for another.
	secret := bytes.Repeat([]byte{7}, 32)
	a, err := DeriveMemberKey(secret, testSpace)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := DeriveMemberKey(secret, testSpace)
	c, _ := DeriveMemberKey(secret, otherSpace)
	if !a.Public().Equal(b.Public()) || a.Public().Equal(c.Public()) {
		t.Fatal("member keys are one per account and space")
	}
	if _, err := DeriveMemberKey(secret[:31], testSpace); err == nil {
		t.Fatal("a short secret")
	}
}

func TestMemberKeyRecord(t *testing.T) {
	acct, _ := identity.GenerateKey()
	m := NewMemberKey()
	r := &MemberKeyRecord{Member: acct.DID(), Key: m.Public()}
	v := signedBy(t, acct, MemberKeyCollection, MemberKeyKey(acct.DID()), r.Object())
	got, err := ReadMemberKey(v, acct.DID())
	if err != nil || got.Member != acct.DID() || !got.Key.Equal(m.Public()) {
		t.Fatalf("%v", err)
	}
	// Bound to its root: another account's root, another member's key.
	_, err = ReadMemberKey(v, otherRoot)
	wantErr(t, err, ErrMalformed, CodeMemberKey)
	v = signedBy(t, acct, MemberKeyCollection, MemberKeyKey(otherRoot), r.Object())
	_, err = ReadMemberKey(v, acct.DID())
	wantErr(t, err, ErrMalformed, CodeMemberKey)
	for _, body := range []string{`{"member":"` + acct.DID() + `"}`, `{"member":"x","key":"` + m.Public().Text() + `"}`,
		`{"member":"` + acct.DID() + `","key":"AAAA"}`, `{"member":"` + acct.DID() + `","key":"` + m.Public().Text() + `","x":1}`} {
		v := signedBy(t, acct, MemberKeyCollection, MemberKeyKey(acct.DID()), parse(t, body))
		_, err := ReadMemberKey(v, acct.DID())
		wantErr(t, err, ErrMalformed, CodeMemberKey)
	}
}

func TestBoxRoundTrip(t *testing.T) {
	k := NewKey()
	m := NewMemberKey()
	b, err := NewBox(k, testSpace, testRoot, m.Public())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Sealed) != boxLen || b.KeyID != k.ID() {
		t.Fatalf("box of %d bytes", len(b.Sealed))
	}
	// Through text and a version, as it travels.
	acct, _ := identity.GenerateKey()
	v := signedBy(t, acct, BoxCollection, BoxKey(k.ID(), testRoot), parse(t, canon(t, b.Object())))
	if len(v.Key) != 84 || !record.ValidKey(v.Key) {
		t.Fatalf("box key %q", v.Key)
	}
	got, err := ReadBox(v)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := got.Open(m, testSpace)
	if err != nil || !opened.Equal(k) {
		t.Fatalf("%v", err)
	}
	// At another key, the box is refused.
	v = signedBy(t, acct, BoxCollection, BoxKey(k.ID(), otherRoot), b.Object())
	_, err = ReadBox(v)
	wantErr(t, err, ErrMalformed, CodeBoxShape)
}

// Boxes to the wrong member, or moved, or changed, never open.
func TestBoxTampering(t *testing.T) {
	k := NewKey()
	m, eve := NewMemberKey(), NewMemberKey()
	b, _ := NewBox(k, testSpace, testRoot, m.Public())

	// Another member key.
	_, err := b.Open(eve, testSpace)
	wantErr(t, err, ErrNoKey, CodeBoxTo)
	// Readdressed to eve: she is now "to", but the box was not boxed to her.
	re := *b
	re.To = eve.Public()
	_, err = re.Open(eve, testSpace)
	wantErr(t, err, ErrOpen, CodeBoxOpen)
	// Another space, another member root, another keyId.
	_, err = b.Open(m, otherSpace)
	wantErr(t, err, ErrOpen, CodeBoxOpen)
	mv := *b
	mv.Member = otherRoot
	_, err = mv.Open(m, testSpace)
	wantErr(t, err, ErrOpen, CodeBoxOpen)
	kv := *b
	kv.KeyID = NewKey().ID()
	_, err = kv.Open(m, testSpace)
	wantErr(t, err, ErrOpen, CodeBoxOpen)
	// Every bit after the format byte.
	for i := 1; i < len(b.Sealed); i++ {
		for bit := range 8 {
			fb := *b
			fb.Sealed = bytes.Clone(b.Sealed)
			fb.Sealed[i] ^= 1 << bit
			if _, err := fb.Open(m, testSpace); err == nil {
				t.Fatalf("flipped bit %d.%d opens", i, bit)
			}
		}
	}
	// A box that holds another key than it names: boxed honestly by HPKE,
	// but with the keyId of another key.
	other := NewKey()
	liar, _ := NewBox(other, testSpace, testRoot, m.Public())
	liar.KeyID = k.ID()
	liar.Sealed = hpkeBox(t, m.Public(), boxAAD(testSpace, k.ID(), testRoot, m.Public()), other.Bytes())
	_, err = liar.Open(m, testSpace)
	wantErr(t, err, ErrPlaintext, CodeKeyID)
	// Malformed bodies.
	good := b.Object()
	for _, edit := range []func(o *canonical.Object){
		func(o *canonical.Object) { o.Delete("to") },
		func(o *canonical.Object) { o.Set("box", "AQ") },
		func(o *canonical.Object) { o.Set("box", b64.EncodeToString(b.Sealed)+"A") },
		func(o *canonical.Object) { o.Set("keyId", "bnotakeyid") },
		func(o *canonical.Object) { o.Set("member", "did:key:x") },
		func(o *canonical.Object) { o.Set("to", 1.0) },
		func(o *canonical.Object) { o.Set("extra", true) },
	} {
		o := good.Clone()
		edit(o)
		if _, err := ParseBox(o); err == nil {
			t.Fatalf("malformed box %s parses", canon(t, o))
		}
	}
	if _, err := ParseBox(good); err != nil {
		t.Fatal(err)
	}
}

func hpkeBox(t *testing.T, to *MemberPublic, aad, pt []byte) []byte {
	t.Helper()
	pk, _ := hpke.NewDHKEMPublicKey(to.pub)
	kdf, aead := boxSuite()
	enc, s, err := hpke.NewSender(pk, kdf, aead, []byte(boxInfo))
	if err != nil {
		t.Fatal(err)
	}
	ct, err := s.Seal(aad, pt)
	if err != nil {
		t.Fatal(err)
	}
	return append(append([]byte{boxFormat}, enc...), ct...)
}

func signedBy(t testing.TB, sk *identity.PrivateKey, coll, key string, body any) *record.Version {
	t.Helper()
	v, err := record.Sign(canonical.NewObject("collection", coll, "createdAt", "2026-01-01T00:00:00.000Z",
		"space", testSpace, "key", key, "seq", float64(0), "log", canonical.NewObject("n", float64(0)), "body", body, "retain", true), sk)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
