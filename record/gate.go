package record

import (
	"errors"
	"time"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// Commands a version invokes (02 §9.3, §7).
const (
	CmdWrite  = identity.CmdRecordWrite
	CmdDelete = identity.CmdRecordDelete
)

// Invocation is what a version asks of the note in its proof: a command and
// its arguments (02 §9.3; 01 §8 in our profile). It is identity's, where
// commands and policies are; see [identity.Invocation].
type Invocation = identity.Invocation

// NoteChecker judges the note a version carries as its proof. It is
// implemented by identity's notes (our profile of 01); record only asks.
type NoteChecker interface {
	// CheckNote reports whether note is valid — with no time at all when at
	// is nil (02 §9.3 step 2), else at that time — whether its audience is
	// audience (step 3), and, when inv is not nil, whether it grants inv
	// (step 4). It returns the note's issuer, the root (step 5), or an
	// error with a note/… reason code (a *Refusal, or an
	// *identity.NoteError, which Root and LooseChecker turn into one).
	CheckNote(note *canonical.Object, audience string, at *time.Time, inv *Invocation) (issuer string, err error)
}

// InvocationOf is the requirement a version in space makes (02 §9.3): to
// write, /record/write with its body; to delete, /record/delete.
func InvocationOf(v *Version, space string, byCreator *bool) *Invocation {
	inv := &Invocation{Cmd: CmdWrite, Space: space, Collection: v.Collection, ByCreator: byCreator}
	if v.Deleted {
		inv.Cmd = CmdDelete
	} else if v.HasBody {
		inv.HasBody, inv.Body = true, v.Body
	}
	return inv
}

// Root runs the capability gate of 02 §9.3 for a version judged in space:
// with no proof the root is the author; with one, createdAt must parse, the
// note must be valid with no time, be addressed to the author and grant the
// invocation, and the root is its issuer. notes may be nil only for
// versions without a proof.
func Root(v *Version, inv *Invocation, notes NoteChecker) (string, error) {
	if v.Proof == nil {
		return v.Author, nil
	}
	if _, err := ParseTime(v.CreatedAt); err != nil {
		return "", refuse(CodeCreatedAt, "createdAt", "a version with a proof has a createdAt that parses as a time (02 §9.3 step 1): "+err.Error())
	}
	if notes == nil {
		return "", refuse(CodeNoProof, "proof", "no note checker to judge the proof (02 §9.3)")
	}
	root, err := notes.CheckNote(v.Proof, v.Author, nil, inv)
	if err != nil {
		return "", noteRefusal(err)
	}
	return root, nil
}

// noteRefusal turns a note checker's error into a *Refusal with the same
// reason code, so every refusal of a version is one type.
func noteRefusal(err error) *Refusal {
	var r *Refusal
	if errors.As(err, &r) {
		return r
	}
	var ne *identity.NoteError
	if errors.As(err, &ne) {
		field := "proof"
		if ne.Field != "" {
			field += "." + ne.Field
		}
		return refuse(ne.Code, field, ne.Message)
	}
	return refuse(CodeNoteError, "proof", "the note could not be judged: "+err.Error())
}
