package collection

import (
	"math"
	"strconv"
	"strings"
)

// Bounds of this implementation. The spec sets none of them (02 §10 leaves
// the size of a body open); they keep a definition from another member
// from costing unbounded time or memory. A definition beyond them is
// invalid with [CodeDefBound], which names the bound.
const (
	// MaxSchemaDepth is how deeply schemas may nest through properties and
	// items: the top-level schema is at depth 1.
	MaxSchemaDepth = 64
	// MaxEnum is the most values one enum, or choices one oneOf, may list.
	MaxEnum = 10_000
	// MaxReasons is the most reasons an invalid definition lists; past it
	// one more reason, [CodeDefMore], says that more were found.
	MaxReasons = 64
	// MaxIssues is the most issues one body or one version's links are
	// flagged with; past it one more, [CodeSchemaMore] or [CodeLinkMore].
	MaxIssues = 256
)

// Reason is one reason a definition is invalid (02 §6.1): a stable code
// (def/…), the JSON path in the definition body where it was found, and a
// message naming the rule.
type Reason struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (r Reason) String() string { return r.Code + " at " + r.Path + ": " + r.Message }

// Issue is one flag a reader raises on a body or a version's links (02
// §5.2, §6.2, §9.6): a stable code (schema/… or link/…), the JSON path in
// the body (or, for links, the version) where it was found, and a message.
// An issue is never a reason to refuse a version.
type Issue struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Message string `json:"message"`
}

func (i Issue) String() string { return i.Code + " at " + i.Path + ": " + i.Message }

// Invalid is the error of an invalid definition: every reason found, up to
// [MaxReasons]. A peer treats the definition as none (02 §6.1).
type Invalid struct {
	Reasons []Reason
}

func (e *Invalid) Error() string {
	var b strings.Builder
	b.WriteString("minca/collection: invalid definition")
	for i, r := range e.Reasons {
		if i == 3 {
			b.WriteString("; and " + strconv.Itoa(len(e.Reasons)-3) + " more")
			break
		}
		b.WriteString("; ")
		b.WriteString(r.String())
	}
	return b.String()
}

// reasons collects reasons up to MaxReasons.
type reasons struct {
	list []Reason
	more int
}

func (rs *reasons) add(code, path, msg string) {
	if len(rs.list) < MaxReasons {
		rs.list = append(rs.list, Reason{Code: code, Path: path, Message: msg})
		return
	}
	rs.more++
}

func (rs *reasons) result() []Reason {
	if rs.more == 0 {
		return rs.list
	}
	return append(rs.list, Reason{Code: CodeDefMore, Path: "$",
		Message: strconv.Itoa(rs.more) + " more reasons not listed (at most " + strconv.Itoa(MaxReasons) + " are)"})
}

// issues collects issues up to MaxIssues.
type issues struct {
	list     []Issue
	more     int
	moreCode string
}

func (is *issues) add(code, path, msg string) {
	if len(is.list) < MaxIssues {
		is.list = append(is.list, Issue{Code: code, Path: path, Message: msg})
		return
	}
	is.more++
}

func (is *issues) full() bool { return len(is.list) >= MaxIssues }

// stop records that issues were left unlisted or unlooked-for.
func (is *issues) stop() { is.more++ }

func (is *issues) result() []Issue {
	if is.more == 0 {
		return is.list
	}
	return append(is.list, Issue{Code: is.moreCode, Path: "$",
		Message: "further issues were not listed or not looked for (at most " + strconv.Itoa(MaxIssues) + " are listed)"})
}

// member extends a JSON path with an object member: $.name for a name that
// reads as an identifier, $["a name"] otherwise.
func member(path, name string) string {
	if isIdent(name) {
		return path + "." + name
	}
	return path + "[" + strconv.Quote(name) + "]"
}

// index extends a JSON path with an array index.
func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// jsonType names the JSON type of a value of canonical's model, for messages.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		if x == math.Trunc(x) {
			return "an integer"
		}
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
