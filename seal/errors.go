package seal

import (
	"errors"

	"github.com/minca-go/minca/record"
)

// Sentinels every [*Error] wraps, by what a caller does about it. Test with
// errors.Is.
var (
	// ErrMalformed: the input is not the format it claims to be — a sealed
	// body, an envelope, a key, a box, a key change — and no key was tried.
	ErrMalformed = errors.New("minca/seal: malformed")
	// ErrNoKey: the key the input names is not held. Not damage: the
	// reader is one without the key, and skips what needs it (02 §9.4).
	ErrNoKey = errors.New("minca/seal: key not held")
	// ErrOpen: authentication failed. The bytes were changed, or they were
	// sealed for another version, space, key or recipient. Nothing of the
	// plaintext is returned.
	ErrOpen = errors.New("minca/seal: does not open")
	// ErrPlaintext: it opened, but what it holds is not the format sealed
	// there. Only a member who holds the key could have sealed it.
	ErrPlaintext = errors.New("minca/seal: sealed content malformed")
	// ErrChain: a key change whose earlier keys leave the first key K₀ out
	// or name a key that is not theirs: a reader takes no key from it (02
	// §7.3).
	ErrChain = errors.New("minca/seal: key chain broken")
	// ErrNoCurrentKey: the writer holds none of the space's current keys
	// that it may seal under (docs/private-spaces.md, Which key seals).
	ErrNoCurrentKey = errors.New("minca/seal: no current key to seal under")
)

// Reason codes (docs/private-spaces.md, Reason codes). They are a stable
// contract: tools print them, and tests, peers and people match on them.
const (
	CodeShape      = "seal/shape"       // a sealed body is not {sealed, keyId}, or sealed is not base64url of an envelope
	CodeKeyID      = "seal/key-id"      // a keyId is not the form of one, or a key is not the one its keyId names
	CodeNoKey      = "seal/no-key"      // the key a sealed body or box names is not held
	CodeOpen       = "seal/open"        // the envelope does not open under the key and its binding: changed, or sealed for another version
	CodePlaintext  = "seal/plaintext"   // opened, but not {"body", "links"?} (02 §5.1)
	CodeChain      = "seal/chain"       // a key change's earlier keys leave K₀ out, name a key not theirs, or don't open
	CodeKeyChange  = "seal/key-change"  // a sys.key body is not {keyId, readKey, earlier}
	CodeMemberKey  = "seal/member-key"  // a sys.memberkey body or a member key is not the format
	CodeBoxShape   = "seal/box-shape"   // a sys.box body is not {member, to, keyId, box}
	CodeBoxOpen    = "seal/box-open"    // a box does not open under this member key and its binding
	CodeBoxTo      = "seal/box-to"      // a box is for another member key
	CodeInviteKey  = "seal/invite-key"  // an invite's key is not {keyId, key}
	CodeNoCurrent  = "seal/no-current"  // no current key the writer holds may seal
	CodeFile       = "seal/file"        // a sealed file is not an envelope
	CodeKeyInvalid = "seal/key-invalid" // a key is not 32 bytes of base64url
)

// Codes lists every reason code of this package.
func Codes() []string {
	return []string{CodeShape, CodeKeyID, CodeNoKey, CodeOpen, CodePlaintext, CodeChain, CodeKeyChange,
		CodeMemberKey, CodeBoxShape, CodeBoxOpen, CodeBoxTo, CodeInviteKey, CodeNoCurrent, CodeFile, CodeKeyInvalid}
}

// Error is every error this package returns about its input: a stable
// reason code, the field it is about ("" for the whole), a message naming
// the rule, and the sentinel saying what kind of failure it is.
type Error struct {
	Code    string
	Field   string
	Message string
	kind    error
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Code + ": " + e.Field + ": " + e.Message
	}
	return e.Code + ": " + e.Message
}

// Unwrap returns the sentinel: ErrMalformed, ErrNoKey, ErrOpen,
// ErrPlaintext, ErrChain or ErrNoCurrentKey.
func (e *Error) Unwrap() error { return e.kind }

// ReasonCode returns the stable reason code.
func (e *Error) ReasonCode() string { return e.Code }

// Refusal is the error as a version's refusal, for a judge that refuses a
// version for it (02 §9.5).
func (e *Error) Refusal() *record.Refusal {
	return &record.Refusal{Code: e.Code, Field: e.Field, Message: e.Message}
}

func fail(kind error, code, field, msg string) *Error {
	return &Error{Code: code, Field: field, Message: msg, kind: kind}
}
