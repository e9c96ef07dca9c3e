package record

import (
	"time"

	"github.com/minca-go/minca/canonical"
)

// MaxLooseSkew is how far in the future a loose version's createdAt may be
// (02 §3.5 check 4).
const MaxLooseSkew = 5 * time.Minute

// LooseChecker checks loose versions (02 §3.5): versions with no space,
// handed over rather than synced.
type LooseChecker struct {
	Verifier *Verifier
	// Now is the clock of check 4; nil means time.Now.
	Now func() time.Time
	// Notes judges a proof (check 5); nil refuses every loose version that
	// carries one.
	Notes NoteChecker
}

// loosely absent members (check 1).
var looseAbsent = []string{"space", "log", "seen", "prev", "genesis", "deleted", "retain", "links", "tags"}

// Check runs all five checks of 02 §3.5 on v, expected to be of collection,
// and returns the account it speaks for: the note's issuer, or its author
// when it carries no proof.
func (c *LooseChecker) Check(v *Version, collection string) (string, error) {
	for _, name := range looseAbsent {
		if v.obj.Has(name) {
			return "", refuse(CodeLooseMember, name, "a loose version has no "+name+" (02 §3.5 check 1)")
		}
	}
	if v.Seq != 0 {
		return "", refuse(CodeLooseMember, "seq", "a loose version has seq 0 (02 §3.5 check 1)")
	}
	if v.Collection != collection {
		return "", refuse(CodeLooseCollection, "collection", "collection must be "+collection+", the one expected (02 §3.5 check 2)")
	}
	if n := canonical.UTF16Len(v.Collection); n < 1 || n > MaxCollectionLen {
		return "", refuse(CodeLooseCollection, "collection", "collection must be 1–128 characters (02 §3.5 check 2)")
	}
	if !v.HasBody {
		return "", refuse(CodeLooseBody, "body", "a loose version carries its body (02 §3.5 check 2)")
	}
	created, err := ParseTime(v.CreatedAt)
	if err != nil {
		return "", refuse(CodeLooseCreatedAt, "createdAt", "createdAt must be a time (02 §3.5 check 2): "+err.Error())
	}
	if v.HasTo && canonical.UTF16Len(v.To) > MaxToLen {
		return "", refuse(CodeLooseTo, "to", "to must be a string of at most 128 characters (02 §3.5 check 2)")
	}
	vf := c.Verifier
	if vf == nil {
		vf = &Verifier{}
	}
	if err := vf.Verify(v); err != nil {
		return "", err
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if created.After(now().Add(MaxLooseSkew)) {
		return "", refuse(CodeLooseFuture, "createdAt", "createdAt is more than 5 minutes after now (02 §3.5 check 4)")
	}
	if v.Proof == nil {
		return v.Author, nil
	}
	if c.Notes == nil {
		return "", refuse(CodeNoProof, "proof", "no note checker to judge the proof (02 §3.5 check 5)")
	}
	acct, err := c.Notes.CheckNote(v.Proof, v.Author, &created, nil)
	if err != nil {
		return "", noteRefusal(err)
	}
	return acct, nil
}
