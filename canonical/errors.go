package canonical

import "fmt"

// Reason codes of [Error]. They are stable: callers and tools match on them.
const (
	CodeSyntax    = "json/syntax"    // not JSON at all, or trailing bytes
	CodeUTF8      = "json/utf8"      // bytes that are not UTF-8
	CodeNumber    = "json/number"    // a number outside binary64 (overflow)
	CodeDuplicate = "json/duplicate" // two members of one object with one name
	CodeDepth     = "json/depth"     // nested deeper than MaxDepth
	CodeValue     = "json/value"     // a Go value the model has no place for (Append)
	CodeID        = "cid/invalid"    // a content id that does not decode (02 §2)
)

// Error is a refusal of input by this package: a stable reason code, the byte
// offset where it was found (-1 when it has none) and a message naming the
// rule broken.
type Error struct {
	Code   string
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	if e.Offset >= 0 {
		return fmt.Sprintf("%s at byte %d: %s", e.Code, e.Offset, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Msg)
}
