package node

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minca-go/minca/canonical"
)

// viaJSON is what a body took before plainValue: json.Marshal, then
// canonical.Parse, in canonical bytes.
func viaJSON(t *testing.T, x any) ([]byte, bool) {
	t.Helper()
	raw, err := json.Marshal(x)
	if err != nil {
		return nil, false
	}
	v, err := canonical.Parse(raw)
	if err != nil {
		return nil, false
	}
	b, err := canonical.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b, true
}

// randomPlain is a random body of the plain kinds, nested up to depth.
func randomPlain(r *rand.Rand, depth int) any {
	k := r.IntN(8)
	if depth <= 0 {
		k = r.IntN(6)
	}
	switch k {
	case 0:
		return nil
	case 1:
		return r.IntN(2) == 0
	case 2:
		return string([]rune{rune(r.IntN(0x2000)), 'a', '<', '"', '\\', '\n', rune(0x10000 + r.IntN(100))}[:r.IntN(7)+1])
	case 3:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	case 4:
		return r.IntN(maxExactInt) - maxExactInt/2
	case 5:
		return float64(r.IntN(1000))
	case 6:
		out := make([]any, r.IntN(4))
		for i := range out {
			out[i] = randomPlain(r, depth-1)
		}
		return out
	}
	m := map[string]any{}
	for range r.IntN(5) {
		m[string([]rune{'k', rune(r.IntN(0x3000))})] = randomPlain(r, depth-1)
	}
	return m
}

// A body of plain Go kinds turns into what JSON made of it; anything else
// is left to JSON.
func TestPlainValueIsJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	bodies := []any{
		map[string]any{"i": 7, "text": "a record", "done": false, "none": nil},
		map[string]any{"b": []any{1.5, "x", map[string]any{"z": 1, "a": math.Copysign(0, -1)}}, "a": map[string]any{}},
		map[string]any{"é": "ü", "<&>": "\u2028", "max": maxExactInt, "min": -maxExactInt},
	}
	for range 2000 {
		m := map[string]any{}
		for i := range r.IntN(6) {
			m[string(rune('a'+i))+string(rune(r.IntN(0x3000)))] = randomPlain(r, 3)
		}
		bodies = append(bodies, m)
	}
	for _, x := range bodies {
		want, ok := viaJSON(t, x)
		if !ok {
			t.Fatalf("%#v does not go through JSON", x)
		}
		v, ok := plainValue(x, 1)
		if !ok {
			t.Fatalf("%#v not taken as plain", x)
		}
		got, err := canonical.Marshal(v)
		if err != nil || string(got) != string(want) {
			t.Fatalf("%#v: %s %v, JSON gives %s", x, got, err, want)
		}
	}
	for _, x := range []any{
		map[string]any{"n": math.NaN()},
		map[string]any{"n": math.Inf(1)},
		map[string]any{"n": maxExactInt + 1},
		map[string]any{"s": "\xff"},
		map[string]any{"\xff": 1},
		map[string]any{"t": struct{ A int }{1}},
		map[string]any{"m": map[string]string{"a": "b"}},
		map[string]any{"i": int64(1)},
	} {
		if v, ok := plainValue(x, 1); ok {
			t.Fatalf("%#v taken as plain: %#v", x, v)
		}
	}
}
