package canonical

import (
	"strconv"
	"unicode/utf8"
)

// MaxDepth is how deeply arrays and objects may nest in input to [Parse]: a
// value nested deeper is refused with [CodeDepth]. The top-level value is at
// depth 1, so "[[1]]" has depth 2.
const MaxDepth = 1000

// Parse reads one JSON value (RFC 8259, UTF-8, optional surrounding
// whitespace) into the value model of this package. It refuses invalid JSON,
// bytes that are not UTF-8, numbers that overflow binary64, duplicate member
// names and nesting deeper than MaxDepth, each with an [*Error].
func Parse(data []byte) (any, error) {
	// Strings without escapes are cut from one copy of the input rather
	// than copied one by one: a version is read with one allocation for
	// all its names and most of its values.
	p := parser{data: data, src: string(data)}
	p.skipSpace()
	v, err := p.value(1)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.data) {
		return nil, p.fail(CodeSyntax, "unexpected "+p.describe()+" after the value")
	}
	return v, nil
}

type parser struct {
	data []byte
	src  string // data as a string
	pos  int
	buf  []byte // scratch for strings with escapes
	// The members and elements of the objects and arrays being read,
	// innermost last: each is given a slice of its exact length once
	// read whole, so a decoded value holds no room it does not use (a
	// version naming 64 files holds 65 objects of two members).
	members []Member
	items   []any
}

func (p *parser) fail(code, msg string) error {
	return &Error{Code: code, Offset: p.pos, Msg: msg}
}

// describe names the byte at pos for an error message.
func (p *parser) describe() string {
	if p.pos >= len(p.data) {
		return "end of input"
	}
	c := p.data[p.pos]
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return "byte 0x" + strconv.FormatUint(uint64(c), 16)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.fail(CodeSyntax, "unexpected end of input, expected a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		if depth > MaxDepth {
			return nil, p.fail(CodeDepth, "nested deeper than "+strconv.Itoa(MaxDepth))
		}
		return p.object(depth)
	case c == '[':
		if depth > MaxDepth {
			return nil, p.fail(CodeDepth, "nested deeper than "+strconv.Itoa(MaxDepth))
		}
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.fail(CodeSyntax, "unexpected "+p.describe()+", expected a value")
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.fail(CodeSyntax, "invalid literal, expected "+word)
	}
	p.pos += len(word)
	return nil
}

func (p *parser) object(depth int) (any, error) {
	p.pos++ // {
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return &Object{Members: []Member{}}, nil
	}
	if p.members == nil {
		p.members = make([]Member, 0, 16)
	}
	start := len(p.members)
	var seen map[string]struct{}
	for {
		members := p.members[start:]
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail(CodeSyntax, "unexpected "+p.describe()+", expected a member name")
		}
		nameAt := p.pos
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		// A linear scan is cheaper than a map for the small objects that
		// make up nearly everything; switch to a map for large ones.
		if seen == nil && len(members) >= 16 {
			seen = make(map[string]struct{}, 2*len(members))
			for _, m := range members {
				seen[m.Name] = struct{}{}
			}
		}
		dup := false
		if seen != nil {
			_, dup = seen[name]
			seen[name] = struct{}{}
		} else {
			for i := range members {
				if members[i].Name == name {
					dup = true
					break
				}
			}
		}
		if dup {
			return nil, &Error{Code: CodeDuplicate, Offset: nameAt, Msg: "duplicate member name " + quoteForError(name)}
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail(CodeSyntax, "unexpected "+p.describe()+", expected ':' after a member name")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.members = append(p.members, Member{Name: name, Value: v})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail(CodeSyntax, "unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			obj := &Object{Members: make([]Member, len(p.members)-start)}
			copy(obj.Members, p.members[start:])
			clear(p.members[start:])
			p.members = p.members[:start]
			return obj, nil
		default:
			return nil, p.fail(CodeSyntax, "unexpected "+p.describe()+", expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.pos++ // [
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return []any{}, nil
	}
	if p.items == nil {
		p.items = make([]any, 0, 16)
	}
	start := len(p.items)
	for {
		p.skipSpace()
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail(CodeSyntax, "unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			arr := make([]any, len(p.items)-start)
			copy(arr, p.items[start:])
			clear(p.items[start:])
			p.items = p.items[:start]
			return arr, nil
		default:
			return nil, p.fail(CodeSyntax, "unexpected "+p.describe()+", expected ',' or ']'")
		}
	}
}

func (p *parser) number() (any, error) {
	start := p.pos
	d := p.data
	if d[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(d) && d[p.pos] == '0':
		p.pos++
	case p.pos < len(d) && d[p.pos] >= '1' && d[p.pos] <= '9':
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	default:
		return nil, p.fail(CodeSyntax, "invalid number: expected a digit")
	}
	if p.pos < len(d) && d[p.pos] == '.' {
		p.pos++
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, p.fail(CodeSyntax, "invalid number: expected a digit after '.'")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	if p.pos < len(d) && (d[p.pos] == 'e' || d[p.pos] == 'E') {
		p.pos++
		if p.pos < len(d) && (d[p.pos] == '+' || d[p.pos] == '-') {
			p.pos++
		}
		if p.pos >= len(d) || d[p.pos] < '0' || d[p.pos] > '9' {
			return nil, p.fail(CodeSyntax, "invalid number: expected a digit in the exponent")
		}
		for p.pos < len(d) && d[p.pos] >= '0' && d[p.pos] <= '9' {
			p.pos++
		}
	}
	text := d[start:p.pos]
	// Small integers are by far the most common numbers; skip ParseFloat.
	if len(text) <= 15 {
		if n, ok := smallInt(text); ok {
			return float64(n), nil
		}
	}
	f, err := strconv.ParseFloat(string(text), 64)
	if err != nil {
		// The grammar was checked above, so the only error left is range:
		// ParseFloat reports overflow as ±Inf with ErrRange. Underflow
		// rounds to zero (or a subnormal), as ECMAScript's JSON.parse does.
		return nil, &Error{Code: CodeNumber, Offset: start, Msg: "number " + string(text) + " is outside the range of binary64"}
	}
	return f, nil
}

// smallInt parses an optional '-' and up to 15 digits with no fraction or
// exponent; such a value is exact in binary64.
func smallInt(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		if n == 0 {
			return 0, false // -0 must stay a negative zero; ParseFloat keeps it
		}
		n = -n
	}
	return n, true
}

// str reads a JSON string at pos (which is '"') into WTF-8.
func (p *parser) str() (string, error) {
	p.pos++ // opening quote
	start := p.pos
	d := p.data
	// Fast path: no escapes, all ASCII printable.
	for p.pos < len(d) {
		c := d[p.pos]
		if c == '"' {
			s := p.src[start:p.pos]
			p.pos++
			return s, nil
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
		p.pos++
	}
	buf := append(p.buf[:0], d[start:p.pos]...)
	for {
		if p.pos >= len(d) {
			return "", p.fail(CodeSyntax, "unexpected end of input in a string")
		}
		c := d[p.pos]
		switch {
		case c == '"':
			p.pos++
			p.buf = buf
			return string(buf), nil
		case c == '\\':
			var err error
			buf, err = p.escape(buf)
			if err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.fail(CodeSyntax, "control character 0x"+strconv.FormatUint(uint64(c), 16)+" in a string must be escaped")
		case c < 0x80:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(d[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fail(CodeUTF8, "invalid UTF-8 in a string")
			}
			buf = append(buf, d[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

func (p *parser) escape(buf []byte) ([]byte, error) {
	d := p.data
	if p.pos+1 >= len(d) {
		return nil, p.fail(CodeSyntax, "unexpected end of input in an escape")
	}
	c := d[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return append(buf, c), nil
	case 'b':
		return append(buf, '\b'), nil
	case 'f':
		return append(buf, '\f'), nil
	case 'n':
		return append(buf, '\n'), nil
	case 'r':
		return append(buf, '\r'), nil
	case 't':
		return append(buf, '\t'), nil
	case 'u':
		u, err := p.hex4()
		if err != nil {
			return nil, err
		}
		if u >= 0xD800 && u < 0xDC00 {
			// A high surrogate: combine with a following \u low surrogate.
			if p.pos+1 < len(d) && d[p.pos] == '\\' && d[p.pos+1] == 'u' {
				save := p.pos
				p.pos += 2
				lo, err := p.hex4()
				if err != nil {
					return nil, err
				}
				if lo >= 0xDC00 && lo < 0xE000 {
					r := 0x10000 + (rune(u)-0xD800)<<10 + (rune(lo) - 0xDC00)
					return utf8.AppendRune(buf, r), nil
				}
				p.pos = save // not a pair: the next escape stands alone
			}
			return appendSurrogate(buf, u), nil
		}
		if u >= 0xDC00 && u < 0xE000 {
			return appendSurrogate(buf, u), nil
		}
		return utf8.AppendRune(buf, rune(u)), nil
	default:
		p.pos -= 2
		return nil, p.fail(CodeSyntax, "invalid escape \\"+string(rune(c)))
	}
}

func (p *parser) hex4() (uint16, error) {
	if len(p.data)-p.pos < 4 {
		return 0, p.fail(CodeSyntax, "a \\u escape needs four hex digits")
	}
	var u uint16
	for i := 0; i < 4; i++ {
		c := p.data[p.pos+i]
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, p.fail(CodeSyntax, "a \\u escape needs four hex digits")
		}
		u = u<<4 | uint16(v)
	}
	p.pos += 4
	return u, nil
}

// appendSurrogate writes a lone surrogate code unit in generalized UTF-8
// (WTF-8): the three bytes UTF-8 would use for it were it a code point.
func appendSurrogate(buf []byte, u uint16) []byte {
	return append(buf, 0xED, 0x80|byte(u>>6)&0x3F, 0x80|byte(u)&0x3F)
}

// quoteForError shows a member name in a message, short and printable.
func quoteForError(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}
