package seal

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

const (
	testSpace  = "bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a"
	otherSpace = "brsp5ppif4zedfjngyopaahlwkun45vlkwdys6jtpjprg3seb2moq"
	testRoot   = "did:key:zDnaemCBstFw5hzNdNggFHZm6GpHoHqNGrwEtrVi9CxGH9V7E"
	otherRoot  = "did:key:zDnaefaPzfrRrZ9eJts2khxmCkNgGJzPvEVz84fRY4EMToUe6"
)

// k0 is the private space key of 02 §7.3's example: ff fe … e0.
func k0(t testing.TB) *Key {
	t.Helper()
	var b [KeyLen]byte
	for i := range b {
		b[i] = 0xff - byte(i)
	}
	if hex.EncodeToString(b[:]) != "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0efeeedecebeae9e8e7e6e5e4e3e2e1e0" {
		t.Fatal("K₀ is not ff fe … e0")
	}
	k, err := KeyFromBytes(b[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// keyOf is a deterministic key from one byte, for tests.
func keyOf(t testing.TB, c byte) *Key {
	t.Helper()
	b := make([]byte, KeyLen)
	for i := range b {
		b[i] = c
	}
	k, err := KeyFromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func parse(t testing.TB, s string) any {
	t.Helper()
	v, err := canonical.Parse([]byte(s))
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

func canon(t testing.TB, v any) string {
	t.Helper()
	b, err := canonical.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// wantErr checks err is an *Error with code that wraps kind.
func wantErr(t testing.TB, err error, kind error, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *seal.Error %s, got %v", code, err)
	}
	if e.Code != code || !errors.Is(err, kind) {
		t.Fatalf("want %s (%v), got %s (%v): %v", code, kind, e.Code, e.kind, err)
	}
}

func specVectors(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// signed is a first version at key in coll of space with body, signed by a
// fresh key.
func signed(t testing.TB, space, coll, key string, body any) *record.Version {
	t.Helper()
	sk, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	v, err := record.Sign(canonical.NewObject("collection", coll, "createdAt", "2026-01-01T00:00:00.000Z",
		"space", space, "key", key, "seq", float64(0), "log", canonical.NewObject("n", float64(0)), "body", body), sk)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
