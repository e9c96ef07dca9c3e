package index

import (
	"errors"
	"strconv"
	"strings"
)

// Reason codes of a malformed query ([*Error]). They are stable: programs
// and the local API match on them.
const (
	CodeJSON        = "query/json"         // not JSON, or not an object
	CodeTooLarge    = "query/too-large"    // the text is over MaxQueryBytes
	CodeType        = "query/type"         // a member of the wrong JSON type
	CodeUnknown     = "query/unknown"      // a member the format does not have
	CodeMissing     = "query/missing"      // a required member is absent
	CodeCollection  = "query/collection"   // not a collection name
	CodePath        = "query/field-path"   // not a body field path, link:<rel> or @attribute
	CodeOperator    = "query/operator"     // an unknown $operator, or one its attribute has not
	CodeOperand     = "query/operand"      // an operand of the wrong kind for its operator
	CodeMixed       = "query/mixed-object" // an object mixing $operators and other members
	CodeEmpty       = "query/empty"        // an empty list or operator object where one is needed
	CodeDepth       = "query/depth"        // filters nested more than MaxDepth deep
	CodeBounds      = "query/bounds"       // a list, a count or the limit out of bounds
	CodeOrder       = "query/order"        // a malformed order
	CodeCursor      = "query/cursor"       // a cursor that does not decode
	CodeCursorQuery = "query/cursor-query" // a cursor of another query
	CodeMe          = "query/me"           // "$me" with no account to stand for
	CodeLive        = "query/live"         // order, limit or cursor given to a live query
	CodeProposal    = "query/proposal"     // more than { collection, where? } in a proposal (06 §2.11)
	CodeNotProposal = "query/sys-proposal" // a sys.* collection in a proposal (06 §2.11)
	CodeSpace       = "query/space"        // no space named
)

// Codes lists every reason code a malformed query is refused with.
func Codes() []string {
	return []string{CodeJSON, CodeTooLarge, CodeType, CodeUnknown, CodeMissing, CodeCollection, CodePath,
		CodeOperator, CodeOperand, CodeMixed, CodeEmpty, CodeDepth, CodeBounds, CodeOrder, CodeCursor,
		CodeCursorQuery, CodeMe, CodeLive, CodeProposal, CodeNotProposal, CodeSpace}
}

// ErrMalformed is what every [*Error] is (errors.Is).
var ErrMalformed = errors.New("minca/index: malformed query")

// Error is a refused query: a stable reason code, the path of the bad
// member in the query (docs/queries.md, "Errors": members dotted, list
// entries in brackets, a member that is not a plain name quoted, as in
// where["a.b"].$in[2]; "" for the query itself) and a message naming the
// rule.
type Error struct {
	Code    string
	Path    string
	Message string
}

func (e *Error) Error() string {
	at := e.Path
	if at == "" {
		at = "the query"
	}
	return "minca/index: " + e.Code + " at " + at + ": " + e.Message
}

// Is makes errors.Is(err, ErrMalformed) hold.
func (e *Error) Is(target error) bool { return target == ErrMalformed }

func refuse(code, path, msg string) *Error { return &Error{Code: code, Path: path, Message: msg} }

// member is the path of a member of the object at path.
func member(path, name string) string {
	plain := name != ""
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '$' || c == '@' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			plain = false
			break
		}
	}
	if !plain {
		return path + "[" + strconv.Quote(name) + "]"
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

// entry is the path of entry i of the list at path.
func entry(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// describe names a JSON value's type for a message.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	case string:
		if len(x) > 40 {
			x = x[:40] + "…"
		}
		return "the string " + strconv.Quote(strings.ToValidUTF8(x, "?"))
	case []any:
		return "a list"
	}
	return "an object"
}
