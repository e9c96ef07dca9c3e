package identity

// NoteError is why a note is refused, or grants nothing: a stable reason
// code, the member it concerns and a message naming the rule (02 §9.3, our
// profile of 01 §7–§8). record turns it into a *record.Refusal with the
// same code, so every refusal a version gets is one type.
type NoteError struct {
	Code    string // one of the Code… constants, "note/…"
	Field   string // the member, as a path in the note ("payload.aud"), or "" for the whole note
	Message string
}

func (e *NoteError) Error() string { return e.Code + ": " + e.Message }

// ReasonCode is the stable reason code, for tools that print one.
func (e *NoteError) ReasonCode() string { return e.Code }

func noteErr(code, field, msg string) *NoteError {
	return &NoteError{Code: code, Field: field, Message: msg}
}

// Reason codes of notes. They are a stable contract: tools print them, and
// tests, peers and people match on them.
const (
	CodeNoteShape     = "note/shape"     // a member missing, unknown or of the wrong type; not a minca/ucan/dlg@1 note
	CodeNoteCommand   = "note/command"   // cmd is not a command path, or does not cover what is asked
	CodeNoteIssuer    = "note/issuer"    // iss is not a P-256 did:key, so nothing can verify the note
	CodeNoteSignature = "note/signature" // sig does not decode to 64 bytes, or does not verify under iss
	CodeNoteTime      = "note/time"      // checked at a time outside nbf ≤ t < exp (live checks only)
	CodeNoteAudience  = "note/audience"  // aud is not the key that used the note (02 §9.3 step 3)
	CodeNoteSubject   = "note/subject"   // sub is neither the issuer nor space:<the space asked for>
	CodeNotePolicy    = "note/policy"    // pol is malformed (grants nothing) or does not hold for the arguments
)

// Codes lists every reason code this package's notes produce.
func Codes() []string {
	return []string{
		CodeNoteShape, CodeNoteCommand, CodeNoteIssuer, CodeNoteSignature,
		CodeNoteTime, CodeNoteAudience, CodeNoteSubject, CodeNotePolicy,
	}
}
