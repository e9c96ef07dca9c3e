package record

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

const testSpace = "bimjoifogypbqrtuich3e375d67y43znkjsjnp4q4qhe7gwf7u74a"

func specVersionJSON(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/spec-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		V struct {
			Version json.RawMessage `json:"version"`
		} `json:"version_02_3_4"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.V.Version
}

func mustKey(t testing.TB) *identity.PrivateKey {
	t.Helper()
	k, err := identity.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func obj(t testing.TB, s string) *canonical.Object {
	t.Helper()
	v, err := canonical.Parse([]byte(s))
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v.(*canonical.Object)
}

// first builds and signs a first version in testSpace at a fresh key.
func first(t testing.TB, k *identity.PrivateKey, collection string, n int64, body string) *Version {
	return firstAt(t, k, collection, n, "", body)
}

// firstAt is first with log.prev given.
func firstAt(t testing.TB, k *identity.PrivateKey, collection string, n int64, logPrev, body string) *Version {
	t.Helper()
	key, err := FreshKey(k.DID())
	if err != nil {
		t.Fatal(err)
	}
	o := obj(t, `{"collection":"`+collection+`","createdAt":"2026-09-26T12:00:00.000Z","space":"`+testSpace+`","seq":0,"body":`+body+`}`)
	o.Set("key", key)
	o.Set("log", logValue(n, logPrev))
	v, err := Sign(o, k)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func logValue(n int64, prev string) *canonical.Object {
	if n == 0 {
		return canonical.NewObject("n", 0.0)
	}
	return canonical.NewObject("n", float64(n), "prev", prev)
}

// next signs the version after cur with body, at log place n after logPrev.
func next(t testing.TB, k *identity.PrivateKey, cur *Version, n int64, logPrev, body string) *Version {
	t.Helper()
	o := obj(t, `{"collection":"`+cur.Collection+`","createdAt":"2026-09-26T12:01:00.000Z","space":"`+testSpace+`","body":`+body+`}`)
	NextAfter(cur).Apply(o)
	o.Set("log", logValue(n, logPrev))
	v, err := Sign(o, k)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// refusedWith asserts err is a *Refusal with code.
func refusedWith(t testing.TB, err error, code string) {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) {
		t.Fatalf("got %v, want refusal %s", err, code)
	}
	if r.Code != code {
		t.Fatalf("got %s (%s), want %s", r.Code, r.Message, code)
	}
	if r.Message == "" {
		t.Fatalf("refusal %s has no message", code)
	}
}

// mutate decodes v's JSON, applies f to the object, and re-encodes.
func mutate(t testing.TB, v *Version, f func(o *canonical.Object)) []byte {
	t.Helper()
	b, _ := v.MarshalJSON()
	o := obj(t, string(b))
	f(o)
	out, err := canonical.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
