package record

import (
	"strconv"

	"github.com/minca-go/minca/canonical"
)

// Link says "this record is about that one, in a named role" (02 §5.1).
type Link struct {
	Rel string // lower camel case, ^[a-z][a-zA-Z0-9]{0,63}$
	To  string // a record key (§4.1), never a version id
}

// MaxRelLen is the longest link role (02 §5.1).
const MaxRelLen = 64

// ParseLinks reads a links member: a list of at most 32 objects, each with
// exactly rel and to, well formed (02 §5.1). Anything else is malformed
// (§4.6 #8).
func ParseLinks(val any) ([]Link, error) {
	arr, ok := val.([]any)
	if !ok {
		return nil, refuse(CodeLinks, "links", "links must be a list (02 §5.1)")
	}
	if len(arr) > MaxLinks {
		return nil, refuse(CodeLinks, "links", "at most 32 links per version (02 §5.1, §10)")
	}
	out := make([]Link, len(arr))
	for i, e := range arr {
		field := "links[" + strconv.Itoa(i) + "]"
		o, ok := e.(*canonical.Object)
		if !ok || o.Len() != 2 {
			return nil, refuse(CodeLinks, field, "a link is an object with exactly rel and to (02 §5.1)")
		}
		rel, ok1 := mustString(o, "rel")
		to, ok2 := mustString(o, "to")
		if !ok1 || !ok2 {
			return nil, refuse(CodeLinks, field, "a link is an object with exactly rel and to, both strings (02 §5.1)")
		}
		if !ValidRel(rel) {
			return nil, refuse(CodeLinks, field+".rel", "rel must match ^[a-z][a-zA-Z0-9]{0,63}$ (02 §5.1)")
		}
		if !validKey(to) {
			return nil, refuse(CodeLinks, field+".to", "to must be a record key, 1–128 characters of [a-z0-9:._-] (02 §4.1, §5.1)")
		}
		out[i] = Link{Rel: rel, To: to}
	}
	return out, nil
}

func mustString(o *canonical.Object, name string) (string, bool) {
	v, ok := o.Get(name)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// ValidRel reports whether s is a link role: ^[a-z][a-zA-Z0-9]{0,63}$.
func ValidRel(s string) bool {
	if len(s) < 1 || len(s) > MaxRelLen || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// LinksValue returns links as a JSON value, for building versions.
func LinksValue(links []Link) []any {
	out := make([]any, len(links))
	for i, l := range links {
		out[i] = canonical.NewObject("rel", l.Rel, "to", l.To)
	}
	return out
}
