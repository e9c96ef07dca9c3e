package record

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// typicalVersion is a signed version of about 600 bytes, like a chat
// message or a to-do with a link and a proofless author.
func typicalVersion(b testing.TB) (*Version, []byte, *identity.PrivateKey) {
	k := mustKey(b)
	key, _ := FreshKey(k.DID())
	o := obj(b, `{"collection":"app.todo.item","createdAt":"2026-09-26T12:00:00.000Z","space":"`+testSpace+`","seq":0,"log":{"n":41,"prev":"b47jrvlapsxwsx44hipgsfbwdbupytsv4giuf4hxgoj33hiq4oubq"},
	"links":[{"rel":"about","to":"list.groceries"}],"body":{"text":"Buy milk and bread","done":false,"due":"2026-09-27"}}`)
	o.Set("key", key)
	v, err := Sign(o, k)
	if err != nil {
		b.Fatal(err)
	}
	data, _ := v.MarshalJSON()
	return v, data, k
}

func TestTypicalVersionSize(t *testing.T) {
	_, data, _ := typicalVersion(t)
	if len(data) < 550 || len(data) > 700 {
		t.Fatalf("the benchmark's version is %d bytes, meant to be about 600", len(data))
	}
}

// BenchmarkCanonicalHash: decode, canonicalise and hash a typical version.
func BenchmarkCanonicalHash(b *testing.B) {
	_, data, _ := typicalVersion(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		v, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		payload, _ := v.SignedPart()
		_ = canonical.IDOf(payload)
		body, _ := canonical.Marshal(v.Body)
		_ = canonical.IDOf(body)
	}
}

// BenchmarkVerify: decode and fully verify a typical version from its bytes
// (the author's key resolved once, as for any author seen before).
func BenchmarkVerify(b *testing.B) {
	_, data, _ := typicalVersion(b)
	vf := &Verifier{}
	b.ReportAllocs()
	for b.Loop() {
		v, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := vf.Verify(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerifyColdKey: as BenchmarkVerify, decompressing the author's
// key every time.
func BenchmarkVerifyColdKey(b *testing.B) {
	_, data, _ := typicalVersion(b)
	b.ReportAllocs()
	for b.Loop() {
		v, err := Decode(data)
		if err != nil {
			b.Fatal(err)
		}
		if err := (&Verifier{Resolver: &identity.Resolver{}}).Verify(v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareECDSAVerify: the bound: crypto/ecdsa verifying the same
// payload's signature, with SHA-256 of the payload.
func BenchmarkBareECDSAVerify(b *testing.B) {
	v, _, k := typicalVersion(b)
	payload, _ := v.SignedPart()
	sig, _ := decodeSignature(v.Signature)
	der := identity.SignatureDER(sig[:])
	pub := k.Public().ECDSA()
	b.ReportAllocs()
	for b.Loop() {
		d := sha256.Sum256(payload)
		if !ecdsa.VerifyASN1(pub, d[:], der) {
			b.Fatal("bare verify failed")
		}
	}
}

// BenchmarkSign: sign a typical version from its unsigned members.
func BenchmarkSign(b *testing.B) {
	v, _, k := typicalVersion(b)
	unsigned := v.Object().Clone()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sign(unsigned, k); err != nil {
			b.Fatal(err)
		}
	}
}
