package peers

// members reads the top-level string members named a and b of a JSON
// object as the store keeps it (canonical JSON, 02 §1), skipping every
// other value without decoding it: what an answer needs to know of a
// version before sending it. ok is false for anything it cannot read.
func members(raw []byte, a, b string) (va, vb string, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return "", "", false
	}
	i++
	for {
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == '}' {
			return va, vb, true
		}
		k0 := i
		if i = skipString(raw, i); i < 0 {
			return "", "", false
		}
		key := string(raw[k0+1 : i-1])
		i = skipSpace(raw, i)
		if i >= len(raw) || raw[i] != ':' {
			return "", "", false
		}
		i = skipSpace(raw, i+1)
		v0 := i
		if i = skipValue(raw, i); i < 0 {
			return "", "", false
		}
		if (key == a || key == b) && raw[v0] == '"' {
			s := string(raw[v0+1 : i-1])
			for j := 0; j < len(s); j++ {
				if s[j] == '\\' {
					return "", "", false // not how an id or a collection is written
				}
			}
			if key == a {
				va = s
			} else {
				vb = s
			}
		}
		i = skipSpace(raw, i)
		if i < len(raw) && raw[i] == ',' {
			i++
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index past the string at i, or -1.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index past the value at i, or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' {
			i++
		}
		return i
	}
}
