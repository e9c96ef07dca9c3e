package canonical

import "strings"

// Equal reports whether two values of this package's model are the same
// JSON value, as their canonical forms would be (02 §1): numbers by value
// (so 1 and 1.0, 0 and -0 are equal), strings by their bytes, lists in
// order, objects by their members whatever their order.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x == nil || y == nil {
			return ok && x == y
		}
		if x.Len() != y.Len() {
			return false
		}
		get := y.Get
		if y.Len() > 8 { // names are unique: a map keeps big objects linear
			byName := make(map[string]any, y.Len())
			for _, m := range y.Members {
				byName[m.Name] = m.Value
			}
			get = func(name string) (any, bool) { v, ok := byName[name]; return v, ok }
		}
		for _, m := range x.Members {
			w, ok := get(m.Name)
			if !ok || !Equal(m.Value, w) {
				return false
			}
		}
		return true
	}
	return false
}

// Compare orders two numbers by value, or two strings by their code points
// (bytewise), as a query's range operators do (06 §2.11); ok is false for
// any other pair, which has no order.
func Compare(a, b any) (c int, ok bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		if !ok {
			return 0, false
		}
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}
