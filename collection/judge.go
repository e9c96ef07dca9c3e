package collection

import "github.com/minca-go/minca/record"

// Check is what the rule checks of 02 §9.4 need to judge one version
// against its collection's definition in force. The access history's part
// (membership, grants, which definition is in force, contested collections)
// is the caller's.
type Check struct {
	Version *record.Version
	Root    string   // the version's root (§9.3)
	Content *Content // its content as this peer reads it; nil when it can't (a stub, a sealed body without the key)
	// First is the version's first version, the one its own chain names
	// (§4.5), for a version with seq > 0; FirstContent its content, nil
	// when not readable.
	First        *record.Version
	FirstContent *Content
	InForce      InForce
	OneKey       *OneKey // nil when not held (a private space without K₀)
	TagKey       *TagKey // nil when not held (the key the body was sealed with)
}

// Run makes the checks in the reference order of 02 §9.4 step 4 — the
// onePer key form (4.2), final (4.3), tags (4.4), then retain, onePer and
// fixed (4.5) — and returns the first refusal, a [*record.Refusal], or nil.
// A non-refusal error is the caller's mistake ([ErrWrongDefinition]).
func (c *Check) Run() error {
	v, in := c.Version, c.InForce
	if err := CheckKeyForm(v, in); err != nil {
		return err
	}
	if err := CheckFinal(v, in); err != nil {
		return err
	}
	if err := CheckTags(v, c.Content, c.TagKey, in); err != nil {
		return err
	}
	if err := CheckRetain(v, in); err != nil {
		return err
	}
	if err := CheckOnePer(v, c.Root, c.Content, c.OneKey, in); err != nil {
		return err
	}
	return CheckFixed(v, c.Content, c.First, c.FirstContent, in)
}
