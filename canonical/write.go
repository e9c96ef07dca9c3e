package canonical

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Marshal returns the canonical form of v (02 §1) as UTF-8 bytes.
func Marshal(v any) ([]byte, error) {
	return Append(make([]byte, 0, 256), v)
}

// Append appends the canonical form of v (02 §1) to dst. It refuses NaN and
// infinities, strings that are not WTF-8, and Go types outside the value
// model (see the package comment) with a [*Error] of [CodeValue].
func Append(dst []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...), nil
	case bool:
		if x {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case float64:
		return AppendNumber(dst, x)
	case int:
		return AppendNumber(dst, float64(x))
	case int64:
		return AppendNumber(dst, float64(x))
	case uint64:
		return AppendNumber(dst, float64(x))
	case string:
		return AppendString(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = Append(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = AppendString(dst, e); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case *Object:
		return AppendObjectExcept(dst, x, nil)
	default:
		return nil, &Error{Code: CodeValue, Offset: -1, Msg: fmt.Sprintf("no canonical form for a Go %T", v)}
	}
}

// AppendObjectExcept appends the canonical form of o without the members for
// which skip returns true (skip may be nil). It is how a version's signed
// part is written without copying the version (02 §3.2).
func AppendObjectExcept(dst []byte, o *Object, skip func(name string) bool) ([]byte, error) {
	if o == nil {
		return append(dst, "null"...), nil
	}
	var small [24]int
	order := small[:0]
	for i := range o.Members {
		if skip == nil || !skip(o.Members[i].Name) {
			order = append(order, i)
		}
	}
	// No closure over order: it would move small to the heap, one
	// allocation for every object written.
	if len(order) <= 12 {
		for i := 1; i < len(order); i++ {
			for j := i; j > 0 && CompareUTF16(o.Members[order[j]].Name, o.Members[order[j-1]].Name) < 0; j-- {
				order[j], order[j-1] = order[j-1], order[j]
			}
		}
	} else {
		slices.SortFunc(order, func(a, b int) int { return CompareUTF16(o.Members[a].Name, o.Members[b].Name) })
	}
	dst = append(dst, '{')
	for n, i := range order {
		if n > 0 {
			if o.Members[i].Name == o.Members[order[n-1]].Name {
				return nil, &Error{Code: CodeDuplicate, Offset: -1, Msg: "duplicate member name " + quoteForError(o.Members[i].Name)}
			}
			dst = append(dst, ',')
		}
		var err error
		if dst, err = AppendString(dst, o.Members[i].Name); err != nil {
			return nil, err
		}
		dst = append(dst, ':')
		if dst, err = Append(dst, o.Members[i].Value); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// AppendNumber appends f as ECMAScript's Number::toString writes it: the
// shortest digits that round-trip, -0 as 0, and exponent form from 1e21 up
// and below 1e-6 (02 §1).
func AppendNumber(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, &Error{Code: CodeValue, Offset: -1, Msg: "NaN and infinities have no JSON form"}
	}
	if f == 0 {
		return append(dst, '0'), nil
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.AppendInt(dst, int64(f), 10), nil
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// 'e' with precision -1 gives the shortest round-tripping digits as
	// d.ddddde±XX; rebuild them in ECMAScript's layout.
	var scratch [32]byte
	e := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64)
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			x, _ := strconv.Atoi(string(e[i+1:]))
			exp = x
			break
		}
	}
	var digits [24]byte
	k := 0
	for _, c := range mant {
		if c != '.' {
			digits[k] = c
			k++
		}
	}
	n := exp + 1 // value = 0.d1d2…dk × 10^n
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits[:k]...)
		for i := k; i < n; i++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:k]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for i := 0; i < -n; i++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits[:k]...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:k]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst, nil
}

const hexLower = "0123456789abcdef"

// AppendString appends s as ECMAScript's JSON.stringify writes it (02 §1).
// s is WTF-8: a lone surrogate held in its three-byte form is written as
// \udxxx. Bytes that are neither UTF-8 nor such a surrogate are refused.
func AppendString(dst []byte, s string) ([]byte, error) {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			continue
		}
		if c < 0x80 {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"':
				dst = append(dst, '\\', '"')
			case '\\':
				dst = append(dst, '\\', '\\')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\r':
				dst = append(dst, '\\', 'r')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexLower[c>>4], hexLower[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		u, ok := surrogateAt(s, i)
		if !ok {
			return nil, &Error{Code: CodeValue, Offset: -1, Msg: "string holds bytes that are not UTF-8 at " + strconv.Itoa(i)}
		}
		// WTF-8 writes a lead surrogate followed by a trail one as the
		// pair's 4-byte character; as two 3-byte surrogates it would read
		// back as that character, a different string with another hash.
		if next, ok := surrogateAt(s, i+3); ok && u < 0xDC00 && next >= 0xDC00 {
			return nil, &Error{Code: CodeValue, Offset: -1, Msg: "string holds a surrogate pair as two 3-byte surrogates (not WTF-8) at " + strconv.Itoa(i)}
		}
		dst = append(dst, s[start:i]...)
		dst = append(dst, '\\', 'u', hexLower[u>>12], hexLower[u>>8&0xF], hexLower[u>>4&0xF], hexLower[u&0xF])
		i += 3
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

// surrogateAt decodes a WTF-8 lone surrogate (ED A0..BF 80..BF) at s[i:].
func surrogateAt(s string, i int) (uint16, bool) {
	if i+2 >= len(s) || s[i] != 0xED || s[i+1] < 0xA0 || s[i+1] > 0xBF || s[i+2] < 0x80 || s[i+2] > 0xBF {
		return 0, false
	}
	return 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), true
}

// CompareUTF16 orders two WTF-8 strings by their UTF-16 code units, as
// ECMAScript compares strings and 02 §1 sorts member names. It returns -1,
// 0 or +1.
func CompareUTF16(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		switch {
		case len(a) < len(b):
			return -1
		case len(a) > len(b):
			return 1
		}
		return 0
	}
	if a[i] < 0x80 && b[i] < 0x80 {
		if a[i] < b[i] {
			return -1
		}
		return 1
	}
	// Back up to the start of the code point the difference falls in.
	for i > 0 && a[i]&0xC0 == 0x80 {
		i--
	}
	ua, la := firstUnit(a[i:])
	ub, lb := firstUnit(b[i:])
	switch {
	case ua < ub:
		return -1
	case ua > ub:
		return 1
	case la < lb:
		return -1
	case la > lb:
		return 1
	}
	return 0
}

// firstUnit returns the first UTF-16 code unit of the code point at the
// start of s and, for a supplementary code point, its second unit (else 0).
func firstUnit(s string) (uint16, uint16) {
	if s == "" {
		return 0, 0
	}
	if u, ok := surrogateAt(s, 0); ok {
		return u, 0
	}
	r, size := utf8.DecodeRuneInString(s)
	if r == utf8.RuneError && size <= 1 {
		return uint16(s[0]), 0 // not WTF-8; any consistent order will do
	}
	if r >= 0x10000 {
		r -= 0x10000
		return 0xD800 + uint16(r>>10), 0xDC00 + uint16(r&0x3FF)
	}
	return uint16(r), 0
}
