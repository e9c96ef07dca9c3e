package judge

import (
	"sync"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/space"
)

// Refusal codes of the judge's own checks (beside record's).
const (
	// CodeNoSpace: a version with no space is never stored in one (02 §3.5).
	CodeNoSpace = "space/none"
	// CodeRetainRequired: an access-history version without retain (02 §4.5).
	CodeRetainRequired = "retain/required"
)

// IsAccessCollection reports whether a collection is one of the access
// history's (02 §4.5), whose versions a peer MUST refuse without retain.
func IsAccessCollection(c string) bool { return space.IsAccessCollection(c) }

// Judge is the part of 02 §9 that needs no access history: every root may
// write. Check runs what needs the version alone — shape (§4.6), the crypto
// gate (§3.3), the capability gate (§9.3), retain on the access collections
// and on a stub (§4.5) — and is safe for concurrent use; Decide runs the
// checks against what is held — the chain (§4.7) and first version (§4.6
// bullets), *later* when the version they name is not held, and whose a
// first version's key is (§4.1). [SpaceJudge] builds the full judge on it
// (membership, grants and the rules in force, §9.4 steps 2–5); alone it is
// the bound the full judge is measured against, and the engine's tests'.
type Judge struct {
	// Verifier runs the crypto gate; nil uses one of the Judge's own with a
	// VerdictCache of passing verdicts (§3.2).
	Verifier *record.Verifier
	// Notes judges the note in a version's proof (identity's Checker);
	// nil refuses every version with a proof as note/unchecked.
	Notes record.NoteChecker

	once sync.Once
	own  *record.Verifier
}

var _ engine.Judge = (*Judge)(nil)

func (j *Judge) verifier() *record.Verifier {
	if j.Verifier != nil {
		return j.Verifier
	}
	j.once.Do(func() { j.own = &record.Verifier{Cache: &record.VerdictCache{}} })
	return j.own
}

// Check makes the checks of a version alone, in 02 §9's order.
func (j *Judge) Check(v *record.Version) (engine.Checked, error) {
	if !v.HasSpace {
		return engine.Checked{}, &record.Refusal{Code: CodeNoSpace, Field: "space",
			Message: "a version without space is loose (02 §3.5) and is never stored in a space"}
	}
	if v.Retain && v.IsStub() {
		return engine.Checked{}, &record.Refusal{Code: record.CodeRetainStub, Field: "body",
			Message: "a retained version travels whole: a stub of one is refused (02 §4.5)"}
	}
	if IsAccessCollection(v.Collection) && !v.Retain {
		return engine.Checked{}, &record.Refusal{Code: CodeRetainRequired, Field: "retain",
			Message: "a version of the access-history collection " + v.Collection + " carries retain: true (02 §4.5)"}
	}
	if err := j.verifier().Verify(v); err != nil {
		return engine.Checked{}, err
	}
	root, err := record.Root(v, record.InvocationOf(v, v.Space, nil), j.Notes)
	if err != nil {
		return engine.Checked{}, err
	}
	return engine.Checked{Root: root}, nil
}

// Decide makes the checks against what is held. A later version waits for
// the version its prev names, and its first version, when they are not held
// (02 §4.7, §9.5); otherwise it must follow prev and name its record's
// first version. A first version must be at a key its root may write first
// (§4.1). Nothing here depends on arrival order, so the store's held state
// is the same whatever order versions come in.
func (j *Judge) Decide(h engine.HeldReader, v *record.Version, c engine.Checked) (engine.Decision, error) {
	if v.Seq == 0 {
		if err := record.CheckFirstKey(v, c.Root); err != nil {
			return refused(err)
		}
		return engine.Decision{Verdict: engine.Stands}, nil
	}
	// A link that is no id in its canonical text gives the zero ID, which
	// is never held.
	prev, _ := v.PrevDigest()
	genesis, _ := v.GenesisDigest()
	p, okP, err := h.Held(prev)
	if err != nil {
		return engine.Decision{}, err
	}
	g, okG, err := h.Held(genesis)
	if err != nil {
		return engine.Decision{}, err
	}
	if !okP {
		waits := []string{v.Prev}
		if !okG && v.Genesis != v.Prev {
			waits = append(waits, v.Genesis)
		}
		return engine.Decision{Verdict: engine.Later, Waits: waits}, nil
	}
	if err := record.CheckChain(v, p); err != nil {
		return refused(err)
	}
	if !okG {
		return engine.Decision{Verdict: engine.Later, Waits: []string{v.Genesis}}, nil
	}
	if err := record.CheckGenesis(v, g); err != nil {
		return refused(err)
	}
	return engine.Decision{Verdict: engine.Stands}, nil
}

func refused(err error) (engine.Decision, error) {
	if r, ok := err.(*record.Refusal); ok {
		return engine.Decision{Verdict: engine.Refused, Refusal: r}, nil
	}
	return engine.Decision{}, err
}
