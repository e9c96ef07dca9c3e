package identity

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func specVersion(t *testing.T) (author, signed, sig string) {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		V struct {
			Version struct {
				Author    string `json:"author"`
				Signature string `json:"signature"`
			} `json:"version"`
			Signed string `json:"signed_part_canonical"`
		} `json:"version_02_3_4"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.V.Version.Author, v.V.Signed, v.V.Version.Signature
}

// 02 §3.4: the given signature verifies against the author's did:key.
func TestSpecSignatureVerifies(t *testing.T) {
	author, signed, sigText := specVersion(t)
	k, err := ParseDID(author)
	if err != nil {
		t.Fatal(err)
	}
	if k.DID() != author {
		t.Fatalf("DID() = %s", k.DID())
	}
	sig, err := base64.RawURLEncoding.DecodeString(sigText)
	if err != nil {
		t.Fatal(err)
	}
	if !k.Verify([]byte(signed), sig) {
		t.Fatal("the §3.4 signature does not verify")
	}
	if k.Verify([]byte(signed+" "), sig) {
		t.Fatal("verifies over other bytes")
	}
	sig[10] ^= 1
	if k.Verify([]byte(signed), sig) {
		t.Fatal("a changed signature verifies")
	}
	// Encoding the decoded key gives the same DID back.
	if did, err := DIDOf(k.ECDSA()); err != nil || did != author {
		t.Fatalf("DIDOf = %s, %v", did, err)
	}
}

func TestGenerateSignVerify(t *testing.T) {
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(k.DID(), "did:key:zDnae") {
		t.Fatalf("P-256 did:keys start zDnae, got %s", k.DID())
	}
	pub, err := ParseDID(k.DID())
	if err != nil {
		t.Fatal(err)
	}
	sig, err := k.Sign([]byte("hello"))
	if err != nil || len(sig) != 64 {
		t.Fatalf("Sign: %d bytes, %v", len(sig), err)
	}
	if !pub.Verify([]byte("hello"), sig) {
		t.Fatal("own signature does not verify")
	}
	other, _ := GenerateKey()
	if other.Public().Verify([]byte("hello"), sig) {
		t.Fatal("verifies under another key")
	}
	// Many signatures: r or s with high bit set or leading zeros all
	// convert to DER and back correctly.
	for i := 0; i < 200; i++ {
		sig, _ := k.Sign([]byte{byte(i)})
		if !pub.Verify([]byte{byte(i)}, sig) {
			t.Fatalf("signature %d does not verify", i)
		}
		d := sha256.Sum256([]byte{byte(i)})
		if !ecdsa.VerifyASN1(pub.ECDSA(), d[:], SignatureDER(sig)) {
			t.Fatalf("signature %d: its SignatureDER does not verify with crypto/ecdsa", i)
		}
	}
	if SignatureDER(sig[:63]) != nil {
		t.Fatal("SignatureDER took a 63-byte signature")
	}
}

func TestParseDIDRefusals(t *testing.T) {
	author, _, _ := specVersion(t)
	bad := []string{
		"", "did:key:", "did:key:z", "did:web:example.com", "did:key:" + author[9:],
		author + "1", author[:len(author)-1], strings.Replace(author, "zDnae", "zDnaf", 1),
		"did:key:z0OIl", "did:key:z1" + author[9:], "did:key:z" + strings.Repeat("z", 500),
		// An ed25519 did:key (multicodec 0xed 0x01).
		"did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK",
	}
	for _, s := range bad {
		if _, err := ParseDID(s); !errors.Is(err, ErrDID) {
			t.Errorf("ParseDID(%q) = %v, want ErrDID", s, err)
		}
	}
}

func TestBase58RoundTrip(t *testing.T) {
	for _, b := range [][]byte{{}, {0}, {0, 0, 1}, {255, 255}, []byte("hello world")} {
		s := encodeBase58(b)
		if len(b) == 0 {
			continue
		}
		got, err := decodeBase58(s, 64)
		if err != nil || string(got) != string(b) {
			t.Errorf("%x → %s → %x, %v", b, s, got, err)
		}
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key.pem")
	k, _ := GenerateKey()
	if err := WriteKeyFile(path, k); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
	back, err := ReadKeyFile(path)
	if err != nil || back.DID() != k.DID() {
		t.Fatalf("read back %v, %v", back, err)
	}
	other, _ := GenerateKey()
	if err := WriteKeyFile(path, other); err == nil {
		t.Fatal("overwrote an existing key file")
	}
	if again, _ := ReadKeyFile(path); again.DID() != k.DID() {
		t.Fatal("the first key was lost")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left: %v", entries)
	}
	os.Chmod(path, 0o644)
	if _, err := ReadKeyFile(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable key file was read: %v", err)
	}
	if _, err := ParseKey([]byte("not pem")); err == nil {
		t.Fatal("parsed garbage")
	}
}

func TestResolverBounded(t *testing.T) {
	r := &Resolver{Size: 4}
	var dids []string
	for i := 0; i < 10; i++ {
		k, _ := GenerateKey()
		dids = append(dids, k.DID())
		if got, err := r.Resolve(k.DID()); err != nil || got.DID() != k.DID() {
			t.Fatal(err)
		}
	}
	if n := len(r.cur) + len(r.prev); n > 4 {
		t.Fatalf("holds %d keys, bound 4", n)
	}
	if _, err := r.Resolve("did:key:zbad"); err == nil {
		t.Fatal("resolved a bad DID")
	}
	for _, d := range dids {
		if _, err := r.Resolve(d); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzParseDID(f *testing.F) {
	f.Add("did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E")
	f.Add("did:key:z111")
	f.Add("did:key:z")
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseDID(s)
		if err != nil {
			if !errors.Is(err, ErrDID) {
				t.Fatalf("error not wrapping ErrDID: %v", err)
			}
			return
		}
		if k.DID() != s {
			t.Fatalf("accepted %q as %q", s, k.DID())
		}
	})
}

// derToP1363 writes each integer right-aligned in 32 bytes, its DER sign
// byte and leading zeros dropped, and refuses one over 32 bytes.
func TestDERToP1363(t *testing.T) {
	der := func(r, s []byte) []byte {
		out := []byte{0x30, byte(4 + len(r) + len(s)), 0x02, byte(len(r))}
		out = append(out, r...)
		return append(append(out, 0x02, byte(len(s))), s...)
	}
	high := append([]byte{0x00}, bytes.Repeat([]byte{0xff}, 32)...) // 33 bytes: a sign byte
	got, err := derToP1363(der(high, []byte{0x00, 0x00, 0x05}))
	want := append(bytes.Repeat([]byte{0xff}, 32), append(make([]byte, 31), 0x05)...)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("got %x %v, want %x", got, err, want)
	}
	over := append([]byte{0x01}, bytes.Repeat([]byte{0xff}, 32)...) // 257 bits
	for _, bad := range [][]byte{
		der(over, []byte{0x05}),
		der([]byte{0x05}, over),
		der([]byte{0x05}, []byte{0x05})[:7],
		append([]byte{0x31}, der([]byte{0x05}, []byte{0x05})[1:]...),
	} {
		if got, err := derToP1363(bad); err == nil {
			t.Fatalf("%x taken: %x", bad, got)
		}
	}
}

// Sign's nonce is RFC 6979's: the P-256 / SHA-256 signatures of "sample"
// and "test" under the key of RFC 6979 A.2.5 are the RFC's, byte for
// byte, and signing again gives them again.
func TestSignIsRFC6979(t *testing.T) {
	x, _ := hex.DecodeString("C9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721")
	ek, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), x)
	if err != nil {
		t.Fatal(err)
	}
	k, err := NewPrivateKey(ek)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ msg, r, s string }{
		{"sample", "EFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716", "F7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8"},
		{"test", "F1ABB023518351CD71D881567B1EA663ED3EFCF6C5132B354F28D3B0B7D38367", "019F4113742A2B14BD25926B49C649155F267E60D3814B4C0CC84250E46F0083"},
	} {
		want := strings.ToLower(c.r + c.s)
		for range 2 {
			sig, err := k.Sign([]byte(c.msg))
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(sig); got != want {
				t.Fatalf("%q: signature %s, RFC 6979 gives %s", c.msg, got, want)
			}
		}
	}
}
