package canonical

// UTF16Len is the length of a WTF-8 string in UTF-16 code units: what the
// spec's "characters" count, its reference being ECMAScript (02 §1, §10).
// A lone surrogate, as the reader keeps one, is one unit.
func UTF16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c < 0x80:
			i++
			n++
		case c < 0xE0:
			i += 2
			n++
		case c < 0xF0:
			i += 3 // includes WTF-8 lone surrogates: one unit each
			n++
		default:
			i += 4
			n += 2
		}
	}
	return n
}
