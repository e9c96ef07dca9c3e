package index

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// refOrder orders two values as docs/queries.md says, written apart from
// the encoding: type rank, then numbers by value, strings bytewise,
// booleans false first, arrays and objects by canonical JSON.
func refOrder(a, b any) int {
	rank := func(v any) int {
		switch x := v.(type) {
		case nil:
			return 2
		case bool:
			if x {
				return 4
			}
			return 3
		case float64:
			return 5
		case string:
			return 6
		case []any:
			return 7
		}
		return 8
	}
	if c := rank(a) - rank(b); c != 0 {
		return c
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case []any, *canonical.Object:
		ja, _ := canonical.Marshal(a)
		jb, _ := canonical.Marshal(b)
		return bytes.Compare(ja, jb)
	}
	return 0
}

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

func randValue(r *rand.Rand, depth int) any {
	switch r.IntN(9) {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1e300, -1e300, math.SmallestNonzeroFloat64, 3}[r.IntN(10)]
	case 3:
		return r.NormFloat64() * 1e6
	case 4, 5:
		return []string{"", "a", "a\x00", "a\x00b", "a\x01", "ab", "b", "\u00e9", "\uffff", "\U0001f600", "\xed\xa0\x80"}[r.IntN(11)]
	case 6:
		if depth > 1 {
			return "x"
		}
		return []any{randValue(r, depth+1), randValue(r, depth+1)}[:r.IntN(3)]
	case 7:
		if depth > 1 {
			return 1.0
		}
		return canonical.NewObject("x", randValue(r, depth+1))
	}
	return float64(r.IntN(5) - 2)
}

// Encoded values compare as the values do in a query's order, and none is
// a prefix of another unless they are equal.
func TestValueEncodingOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := randValue(r, 0), randValue(r, 0)
		ea, eb := appendValue(nil, a, true), appendValue(nil, b, true)
		if got, want := sign(bytes.Compare(ea, eb)), sign(refOrder(a, b)); got != want {
			t.Fatalf("%#v vs %#v: encodings compare %d, values %d", a, b, got, want)
		}
		if !bytes.Equal(ea, eb) && (bytes.HasPrefix(ea, eb) || bytes.HasPrefix(eb, ea)) {
			t.Fatalf("%#v and %#v: one encoding is a prefix of the other", a, b)
		}
		if bytes.Compare(appendValue(nil, nil, false), ea) >= 0 {
			t.Fatal("absent does not sort first")
		}
		if canonical.Equal(a, b) != bytes.Equal(ea, eb) {
			t.Fatalf("%#v vs %#v: equal %v, encodings equal %v", a, b, canonical.Equal(a, b), bytes.Equal(ea, eb))
		}
	}
}

// Values alike in their first 512 encoded bytes sort as equals; a shorter
// value is never cut.
func TestLongValuesCut(t *testing.T) {
	long := strings.Repeat("x", 600)
	a, b := appendValue(nil, long+"a", true), appendValue(nil, long+"b", true)
	if len(a) != maxValueEnc || !bytes.Equal(a, b) || !valueCut(long) {
		t.Fatalf("long values: %d bytes, equal %v", len(a), bytes.Equal(a, b))
	}
	short := strings.Repeat("x", 500)
	if valueCut(short) || bytes.Compare(appendValue(nil, short, true), a) >= 0 {
		t.Fatal("a shorter prefix must sort before, uncut")
	}
}

func TestCreatedAndSuffix(t *testing.T) {
	var prev []byte
	for _, ms := range []int64{-5e12, -1, 0, 1, 1790000000000, 9e15} {
		e := appendCreated(nil, ms, true)
		if got, ok := decodeCreated(e); !ok || got != ms || len(e) != createdLen {
			t.Fatalf("%d: %d %v", ms, got, ok)
		}
		if prev != nil && bytes.Compare(prev, e) >= 0 {
			t.Fatalf("%d does not sort after the one before", ms)
		}
		prev = e
	}
	if bytes.Compare(appendCreated(nil, 0, false), appendCreated(nil, -9e15, true)) >= 0 {
		t.Fatal("an unknown @createdAt sorts first")
	}
	for _, key := range []string{"a", "akthxqofxox3iszhpi5j3zhl6a.settings", strings.Repeat("k", 128)} {
		created := appendCreated(nil, 1790000000123, true)
		k := appendSuffix([]byte("prefix\x00\x61"), created, key)
		c, got, at, ok := splitSuffix(k)
		if !ok || string(got) != key || !bytes.Equal(c, created) || at != len("prefix\x00\x61") {
			t.Fatalf("%q: %q %v %d", key, got, ok, at)
		}
	}
	if _, _, _, ok := splitSuffix([]byte{1, 2}); ok {
		t.Fatal("a short key split")
	}
}

// @createdBy is the root: the author without a proof, the note's issuer
// with one (02 §9.3 step 5).
func TestRootOf(t *testing.T) {
	v := &record.Version{Author: "did:key:zAuthor"}
	if rootOf(v) != "did:key:zAuthor" {
		t.Fatal(rootOf(v))
	}
	v.Proof = canonical.NewObject("type", "minca/ucan/dlg@1", "payload", canonical.NewObject("iss", "did:key:zAccount", "aud", "did:key:zAuthor"), "sig", "x")
	if rootOf(v) != "did:key:zAccount" {
		t.Fatal(rootOf(v))
	}
}
