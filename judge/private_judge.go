package judge

import (
	"context"
	"errors"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/engine"
	"github.com/minca-go/minca/record"
	"github.com/minca-go/minca/seal"
	"github.com/minca-go/minca/space"
)

// KeyRings is where a [PrivateJudge] finds the keys this node holds for a
// private space: nil when it holds none.
type KeyRings interface {
	Keyring(spaceID string) *seal.Keyring
}

// PrivateJudge is the full judge ([SpaceJudge]) with what a private space
// adds (docs/private-spaces.md §9). Outside the access history, every peer
// refuses a body it holds that is not sealed where the profile says bodies
// are (seal/shape). A peer without the space's keys (Keys nil, or no ring
// for the space) judges the rest as SpaceJudge does, skipping what needs a
// body: tags, onePer, fixed, and the rules of a sealed definition (02 §7.3,
// §7.4, §8.4, §9.4). A peer with them opens each body and the definitions in
// force as of its seen, and makes those checks too: tags under the key the
// body was sealed with, onePer under K₀, fixed against the first version,
// final, retain and the onePer key form (02 §4.1, §7, §8.4), and 02 §6.3's
// rivals by their opened bodies; a body that does not open under a key it
// holds is refused (seal/open, seal/plaintext). Its guarantees and
// concurrency are SpaceJudge's.
type PrivateJudge struct {
	*SpaceJudge
	Keys KeyRings
}

var (
	_ engine.Judge     = (*PrivateJudge)(nil)
	_ engine.Restander = (*PrivateJudge)(nil)
	_ engine.Forgetter = (*PrivateJudge)(nil)
)

// NewPrivateJudge makes a full judge with private spaces' checks, judging
// notes with notes and opening bodies with keys (nil: none held).
func NewPrivateJudge(notes record.NoteChecker, keys KeyRings) *PrivateJudge {
	return &PrivateJudge{SpaceJudge: NewSpaceJudge(notes), Keys: keys}
}

// Decide judges v as SpaceJudge does, then, in a private space, its body.
// Access changes are the replay's alone: their bodies are read in the clear
// (docs/private-spaces.md §4), and a change the replay has added is never
// refused after it.
func (j *PrivateJudge) Decide(hr engine.HeldReader, v *record.Version, c engine.Checked) (engine.Decision, error) {
	d, err := j.SpaceJudge.Decide(hr, v, c)
	if err != nil || d.Verdict != engine.Stands && d.Verdict != engine.Withdrawn || space.IsAccessCollection(v.Collection) {
		return d, err
	}
	h, ok, err := j.SpaceJudge.History(context.Background(), v.Space)
	if err != nil || !ok || !h.Genesis().Private() {
		return d, err
	}
	if InClear(v.Collection) {
		return d, nil
	}
	var ring *seal.Keyring
	if j.Keys != nil {
		ring = j.Keys.Keyring(v.Space)
	}
	if ring == nil {
		if r := sealedShape(v); r != nil {
			return refusedBy(r), nil
		}
		return d, nil
	}
	// With a ring, opening the body checks its shape first (seal/shape),
	// whether or not the key it names is held. The history is read under
	// the judge's lock: reading a state fills its caches, and others read
	// it too (WithHistory: sync's read rule, boxing keys).
	var r *record.Refusal
	_, err = j.WithHistory(context.Background(), v.Space, func(h *space.History) error {
		var err error
		r, err = j.bodyChecks(hr, h, ring, v, c.Root)
		return err
	})
	if err != nil {
		return engine.Decision{}, err
	}
	if r != nil {
		return refusedBy(r), nil
	}
	return d, nil
}

// Preview is SpaceJudge's Preview with this judge's Decide: what a writer
// asks before it signs, a private space's body checks included.
func (j *PrivateJudge) Preview(hr engine.HeldReader, v *record.Version, c engine.Checked) (engine.Decision, error) {
	if space.IsAccessCollection(v.Collection) {
		return j.SpaceJudge.Preview(hr, v, c)
	}
	return j.Decide(hr, v, c)
}

// InClear: outside the access history, the collections whose bodies a
// private space keeps in the clear (docs/private-spaces.md §4).
func InClear(coll string) bool { return coll == seal.MemberKeyCollection || coll == seal.BoxCollection }

// sealedShape: a body held in a private space is sealed.
func sealedShape(v *record.Version) *record.Refusal {
	if !v.HasBody || v.Deleted {
		return nil
	}
	if _, err := seal.ParseSealed(v.Body); err != nil {
		var e *seal.Error
		if errors.As(err, &e) {
			r := e.Refusal()
			r.Message += ": in a private space a body is sealed (02 §3.1, docs/private-spaces.md §4)"
			return r
		}
		return &record.Refusal{Code: seal.CodeShape, Field: "body", Message: err.Error()}
	}
	return nil
}

// opened opens a version's body with the ring: nil content for a stub, a
// delete or a key not held; a refusal for a body that does not open.
func opened(ring *seal.Keyring, v *record.Version) (*seal.Opened, *record.Refusal) {
	o, err := ring.OpenVersion(v)
	if err == nil || errors.Is(err, seal.ErrNoKey) {
		return o, nil
	}
	var e *seal.Error
	if errors.As(err, &e) {
		return nil, e.Refusal()
	}
	return nil, &record.Refusal{Code: seal.CodeShape, Field: "body", Message: err.Error()}
}

// bodyChecks are 02 §9.4 steps 2, 4 and 5 with the body opened and the
// definition in force as of seen read through the ring.
func (j *PrivateJudge) bodyChecks(hr engine.HeldReader, h *space.History, ring *seal.Keyring, v *record.Version, root string) (*record.Refusal, error) {
	o, r := opened(ring, v)
	if r != nil {
		return r, nil
	}
	st, err := h.At(v.Seen)
	if err != nil {
		return nil, err
	}
	in, r := DefinitionInForce(hr, st, ring, v.Collection)
	if r != nil || in.Def == nil {
		return r, nil
	}
	var c *collection.Content
	var tagKey *collection.TagKey
	if o != nil {
		c = &o.Content
		if tk, ok := ring.TagKey(o.KeyID); ok {
			tagKey = &tk
		}
	}
	var oneKey *collection.OneKey
	if ok, held := ring.OneKey(); held {
		oneKey = &ok
	}
	var first *record.Version
	var firstC *collection.Content
	if v.Seq > 0 && len(in.Def.Rules.Fixed) > 0 {
		if l, isLister := hr.(engine.Lister); isLister {
			genesis, _ := v.GenesisDigest()
			f, held, err := l.HeldAsIs(genesis)
			if err != nil {
				return nil, err
			}
			if held {
				fo, fr := opened(ring, f)
				if fr == nil && fo != nil {
					first, firstC = f, &fo.Content
				}
			}
		}
	}
	for _, check := range []func() error{
		func() error { return collection.CheckKeyForm(v, in) },
		func() error { return collection.CheckFinal(v, in) },
		func() error { return collection.CheckTags(v, c, tagKey, in) },
		func() error { return collection.CheckRetain(v, in) },
		func() error { return collection.CheckOnePer(v, root, c, oneKey, in) },
		func() error { return collection.CheckFixed(v, c, first, firstC, in) },
	} {
		if err := check(); err != nil {
			if rf, ok := err.(*record.Refusal); ok {
				return rf, nil
			}
			return nil, err
		}
	}
	return nil, nil
}

// DefinitionInForce reads the definition in force for coll as of st with
// the ring's keys (02 §6.3): the change in force, opened; of rivals none of
// which is picked, the one body they all open to, else a refusal, since
// this peer can read them all and they differ. Unreadable when a key is not
// held; none when the change in force opens to no valid definition.
func DefinitionInForce(hr engine.HeldReader, st *space.State, ring *seal.Keyring, coll string) (collection.InForce, *record.Refusal) {
	if record.IsSys(coll) {
		return collection.InForce{}, nil
	}
	d := st.Definition(coll)
	if d.Def != nil {
		return collection.Defined(d.Def), nil
	}
	ids := d.Changes
	if len(ids) == 0 {
		return collection.InForce{}, nil
	}
	l, ok := hr.(engine.Lister)
	if !ok {
		return collection.Unreadable(), nil
	}
	var def *collection.Definition
	var canon string
	for i, id := range ids {
		dv, held, err := l.HeldAsIs(id)
		if err != nil || !held {
			return collection.Unreadable(), nil
		}
		o, err := ring.OpenVersion(dv)
		if errors.Is(err, seal.ErrNoKey) {
			return collection.Unreadable(), nil
		}
		var dd *collection.Definition
		var text string
		if err == nil && o != nil {
			if b, err := canonicalText(o.Body); err == nil {
				text = b
				dd, _ = collection.ParseDefinitionVersion(dv, o.Body)
			}
		}
		if i == 0 {
			def, canon = dd, text
		} else if text == "" || text != canon {
			return collection.InForce{}, &record.Refusal{Code: space.CodeStandingContested, Field: "collection",
				Message: coll + " is contested with no definition in force as of seen: its rival definitions open to different bodies (02 §6.3)"}
		}
	}
	if def == nil {
		return collection.InForce{}, nil // an invalid definition is none (02 §6.1)
	}
	return collection.Defined(def), nil
}

func canonicalText(v any) (string, error) {
	b, err := canonical.Marshal(v)
	return string(b), err
}
