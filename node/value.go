package node

import (
	"math"
	"slices"
	"unicode/utf8"

	"github.com/minca-go/minca/canonical"
)

// maxExactInt is the largest integer a JSON number (binary64) holds exactly.
const maxExactInt = 1 << 53

// plainValue is x in canonical's value model when it is made of the plain
// kinds a Go caller writes a body with — maps of strings to values, []any,
// strings of UTF-8, finite float64s, ints a binary64 holds exactly, bools
// and nil — the value json.Marshal and canonical.Parse would give, built
// directly (02 §3.2: the body is hashed from its canonical form, which
// neither member order nor Go's types change). ok is false for anything
// else, which goes through JSON as before.
func plainValue(x any, depth int) (v any, ok bool) {
	if depth > canonical.MaxDepth {
		return nil, false
	}
	switch t := x.(type) {
	case nil, bool:
		return t, true
	case string:
		return t, utf8.ValidString(t)
	case float64:
		return t, !math.IsNaN(t) && !math.IsInf(t, 0)
	case int:
		if t > maxExactInt || t < -maxExactInt {
			return nil, false
		}
		return float64(t), true
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			if out[i], ok = plainValue(e, depth+1); !ok {
				return nil, false
			}
		}
		return out, true
	case map[string]any:
		names := make([]string, 0, len(t))
		for name := range t {
			if !utf8.ValidString(name) {
				return nil, false
			}
			names = append(names, name)
		}
		slices.Sort(names) // as json.Marshal gives them
		o := &canonical.Object{Members: make([]canonical.Member, len(names))}
		for i, name := range names {
			e, ok := plainValue(t[name], depth+1)
			if !ok {
				return nil, false
			}
			o.Members[i] = canonical.Member{Name: name, Value: e}
		}
		return o, true
	}
	return nil, false
}
