package enginetest

import (
	"errors"

	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
)

// Judge is the smallest judge of 02 §9 the suite needs, so that the engine's
// tests depend on record alone and not on the node: Check refuses a stub
// of a retained version (§4.5), runs the shape and crypto gates (§4.6,
// §3.3) and finds the root (§9.3, with no note checker: a version with a
// proof is refused); Decide runs the chain checks
// (§4.7: CheckChain, CheckGenesis), the first version's key (§4.1), and
// answers later while the prev or first version is not held (§9.5). It
// knows nothing of spaces' access histories; judge.Judge is the real one.
// It is safe for concurrent use.
type Judge struct{}

var _ engine.Judge = Judge{}

// Check implements [engine.Judge].
func (Judge) Check(v *record.Version) (engine.Checked, error) {
	if v.Retain && v.IsStub() {
		return engine.Checked{}, &record.Refusal{Code: record.CodeRetainStub, Field: "body",
			Message: "a retained version travels whole: a stub of one is refused (02 §4.5)"}
	}
	if err := (&record.Verifier{}).Verify(v); err != nil {
		return engine.Checked{}, err
	}
	root, err := record.Root(v, record.InvocationOf(v, v.Space, nil), nil)
	if err != nil {
		return engine.Checked{}, err
	}
	return engine.Checked{Root: root}, nil
}

// Decide implements [engine.Judge].
func (Judge) Decide(h engine.HeldReader, v *record.Version, c engine.Checked) (engine.Decision, error) {
	if v.Seq == 0 {
		return verdict(record.CheckFirstKey(v, c.Root))
	}
	// A link that is no id in its canonical text gives the zero ID, which
	// is never held.
	prev, _ := v.PrevDigest()
	genesis, _ := v.GenesisDigest()
	p, okP, err := h.Held(prev)
	if err != nil {
		return engine.Decision{}, err
	}
	if !okP {
		waits := []string{v.Prev}
		if v.Genesis != v.Prev {
			if _, okG, err := h.Held(genesis); err != nil {
				return engine.Decision{}, err
			} else if !okG {
				waits = append(waits, v.Genesis)
			}
		}
		return engine.Decision{Verdict: engine.Later, Waits: waits}, nil
	}
	if err := record.CheckChain(v, p); err != nil {
		return verdict(err)
	}
	g, okG, err := h.Held(genesis)
	if err != nil {
		return engine.Decision{}, err
	}
	if !okG {
		return engine.Decision{Verdict: engine.Later, Waits: []string{v.Genesis}}, nil
	}
	return verdict(record.CheckGenesis(v, g))
}

// verdict turns a check's result into a decision: nil stands, a refusal
// refuses, anything else is an error of the judge.
func verdict(err error) (engine.Decision, error) {
	var r *record.Refusal
	switch {
	case err == nil:
		return engine.Decision{Verdict: engine.Stands}, nil
	case errors.As(err, &r):
		return engine.Decision{Verdict: engine.Refused, Refusal: r}, nil
	}
	return engine.Decision{}, err
}
