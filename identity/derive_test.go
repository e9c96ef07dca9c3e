package identity

import (
	"crypto/hkdf"
	"crypto/sha256"
	"testing"
)

// DeriveSecret is HKDF-SHA-256 of the scalar: the same for the same key
// and info, different for another info or another key.
func TestDeriveSecret(t *testing.T) {
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/k.pem"
	if err := WriteKeyFile(path, k); err != nil {
		t.Fatal(err)
	}
	again, err := ReadKeyFile(path) // the same key, read back
	if err != nil {
		t.Fatal(err)
	}
	a, b := k.DeriveSecret("minca/x/v1"), again.DeriveSecret("minca/x/v1")
	if a != b {
		t.Fatal("the same key derives two secrets")
	}
	if a == k.DeriveSecret("minca/y/v1") {
		t.Fatal("two infos derive one secret")
	}
	other, _ := GenerateKey()
	if a == other.DeriveSecret("minca/x/v1") {
		t.Fatal("two keys derive one secret")
	}
	scalar, _ := k.key.Bytes()
	want, _ := hkdf.Key(sha256.New, scalar, nil, "minca/x/v1", 32)
	if string(a[:]) != string(want) {
		t.Fatal("not HKDF-SHA-256 of the scalar")
	}
}
