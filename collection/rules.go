package collection

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// InForce is what a peer knows of a collection's definition in force as of
// a version's seen (02 §6.3). Which one is in force is the access history's
// replay, not this package's: the caller passes its answer. The zero value
// is no definition in force (none was written, or the one in force is
// invalid or a delete): no schema, no rules, no topics.
type InForce struct {
	// Def is the valid definition in force, or nil.
	Def *Definition
	// Unreadable is true when a definition is in force that this peer
	// can't read (a private body without its key, or rivals it can't all
	// open): the checks that need it are skipped (02 §4.1, §6.3, §7.3).
	Unreadable bool
}

// Defined is InForce for a valid definition d; nil gives no definition.
func Defined(d *Definition) InForce { return InForce{Def: d} }

// Unreadable is InForce for a definition this peer can't read.
func Unreadable() InForce { return InForce{Unreadable: true} }

// rules returns the rules in force for a version of collection, and
// whether there are any to apply (02 §7.2): none in sys.*, with no
// definition, or with one this peer can't read.
func (in InForce) rules(collection string) (*Definition, bool) {
	if in.Unreadable || in.Def == nil || record.IsSys(collection) {
		return nil, false
	}
	return in.Def, true
}

// ErrWrongDefinition is returned, wrapped, when a check is given a
// definition of another collection than the version's: a caller's mistake,
// never a verdict on the version.
var ErrWrongDefinition = errors.New("minca/collection: the definition is not the version's collection's")

func (in InForce) check(v *record.Version) (*Definition, bool, error) {
	d, ok := in.rules(v.Collection)
	if ok && d.Name != v.Collection {
		return nil, false, fmt.Errorf("%w: %s for a version in %s", ErrWrongDefinition, d.Name, v.Collection)
	}
	return d, ok, nil
}

func refuse(code, field, msg string) *record.Refusal {
	return &record.Refusal{Code: code, Field: field, Message: msg}
}

// CheckKeyForm makes 02 §4.1's check that needs the definition and no
// oneKey: a first version outside sys.* at a key of a onePer key's form is
// refused unless the rules in force have a onePer that gives that form — a
// shared key (one:…) only for a onePer without @author, an owned key named
// one:… only for one with it. With no definition in force no onePer gives
// either. A peer that can't read the definition accepts it (in.Unreadable).
// It is judged in 02 §9.4 step 4.2, from the definition alone.
func CheckKeyForm(v *record.Version, in InForce) error {
	if v.Seq != 0 || record.IsSys(v.Collection) || in.Unreadable {
		return nil
	}
	form, withAuthor := record.IsOnePerForm(v.Key)
	if !form {
		return nil
	}
	var r Rules
	if in.Def != nil {
		if in.Def.Name != v.Collection {
			return fmt.Errorf("%w: %s for a version in %s", ErrWrongDefinition, in.Def.Name, v.Collection)
		}
		r = in.Def.Rules
	}
	switch {
	case withAuthor && r.HasOnePer() && r.OnePerWithAuthor():
		return nil
	case !withAuthor && r.HasOnePer() && !r.OnePerWithAuthor():
		return nil
	case withAuthor:
		return refuse(CodeKeyOnePer, "key", "an owned key named one:… is a onePer key with @author; the rules in force for "+v.Collection+" have no onePer naming @author (02 §4.1)")
	}
	return refuse(CodeKeyOnePer, "key", "a shared key one:… is a onePer key without @author; the rules in force for "+v.Collection+" have no onePer without @author (02 §4.1)")
}

// CheckFinal refuses a version with seq > 0, deletes included, of a
// collection whose rules in force have final (02 §7.2, §7.4).
func CheckFinal(v *record.Version, in InForce) error {
	d, ok, err := in.check(v)
	if err != nil || !ok || !d.Rules.Final || v.Seq == 0 {
		return err
	}
	return refuse(CodeRuleFinal, "seq", "the rules in force for "+v.Collection+" have final: a record is written once, and no version with seq > 0 stands, deletes included (02 §7.4)")
}

// IsAccessCollection reports whether a collection is one of the access
// history's (02 §4.5), whose every version is retained.
func IsAccessCollection(collection string) bool {
	switch collection {
	case "sys.role", "sys.assign", "sys.remove", "sys.invite", "sys.revoke", "sys.collection",
		"sys.key", "sys.relays", "sys.keepers", "sys.fork", "sys.stepdown", "sys.succeed":
		return true
	}
	return false
}

// WriterMustRetain reports whether a writer must mark a version retain
// (02 §4.5): every version when the definition in force says history
// "all", every version of an access collection, and a first version that
// is not a delete when the rules in force have onePer or fixed. A writer
// that can't read the definition in force retains, which no peer refuses.
func WriterMustRetain(collection string, seq int64, deleted bool, in InForce) bool {
	if IsAccessCollection(collection) {
		return true
	}
	if record.IsSys(collection) {
		return false
	}
	if in.Unreadable {
		return true
	}
	if in.Def == nil {
		return false
	}
	if in.Def.History == HistoryAll {
		return true
	}
	return seq == 0 && !deleted && (in.Def.Rules.HasOnePer() || len(in.Def.Rules.Fixed) > 0)
}

// CheckRetain refuses a version that lacks retain where a peer must
// require it (02 §4.5, §9.4 step 5): any version of an access collection,
// and a first version, not a delete, when the rules in force have onePer
// or fixed. A history "all" collection's writer must retain too, but peers
// do not refuse for it.
func CheckRetain(v *record.Version, in InForce) error {
	if v.Retain {
		return nil
	}
	if IsAccessCollection(v.Collection) {
		return refuse(CodeRuleRetain, "retain", v.Collection+" is an access-history collection: every version of it carries retain (02 §4.5)")
	}
	d, ok, err := in.check(v)
	if err != nil || !ok || v.Seq != 0 || v.Deleted {
		return err
	}
	if d.Rules.HasOnePer() || len(d.Rules.Fixed) > 0 {
		return refuse(CodeRuleRetain, "retain", "a first version under onePer or fixed carries retain, so every peer can check against its body (02 §4.5)")
	}
	return nil
}

// CheckOnePer refuses a first version, not a delete, of a collection with
// onePer in force whose key is not the key derived from it — including when
// a part has no value and there is no key (02 §7.3). It is checked only by
// a peer that can read the body (c not nil) and holds oneKey (k not nil);
// later versions keep the key they have. root is the version's root.
func CheckOnePer(v *record.Version, root string, c *Content, k *OneKey, in InForce) error {
	d, ok, err := in.check(v)
	if err != nil || !ok || !d.Rules.HasOnePer() || v.Seq != 0 || v.Deleted || c == nil || k == nil {
		return err
	}
	want, err := d.OnePerKey(*k, root, *c)
	var nk *NoKeyError
	if errors.As(err, &nk) {
		return refuse(CodeRuleOnePer, "key", "the rules in force for "+v.Collection+" have onePer, and this version has no key: the part "+nk.Part.String()+" has no value (02 §7.3)")
	}
	if err != nil {
		return fmt.Errorf("minca/collection: onePer: %w", err)
	}
	if v.Key != want {
		return refuse(CodeRuleOnePer, "key", "under the onePer rule in force for "+v.Collection+" this version's key is "+want+", not "+v.Key+" (02 §7.3)")
	}
	return nil
}

// CheckFixed refuses a later version, not a delete, in which a field the
// rules in force list as fixed differs from the record's first version —
// compared as canonical JSON, absent equal to absent (02 §7.4). first is
// the version's first version, the one its own chain names (§4.5). It is
// checked only when first carries retain and the peer can read both bodies
// (c and firstC not nil); a first version written before fixed was in force
// carries none, and nothing is compared against it.
func CheckFixed(v *record.Version, c *Content, first *record.Version, firstC *Content, in InForce) error {
	d, ok, err := in.check(v)
	if err != nil || !ok || len(d.Rules.Fixed) == 0 || v.Seq == 0 || v.Deleted {
		return err
	}
	if first == nil || !first.Retain || c == nil || firstC == nil {
		return nil
	}
	for _, f := range d.Rules.Fixed {
		same, err := sameField(c.Body, firstC.Body, f)
		if err != nil {
			return fmt.Errorf("minca/collection: fixed field %q: %w", f, err)
		}
		if !same {
			return refuse(CodeRuleFixed, "body."+f, "the field "+strconv.Quote(f)+" is fixed in "+v.Collection+" and differs from the record's first version "+first.ID+" (02 §7.4)")
		}
	}
	return nil
}

// sameField compares a top-level field of two bodies as canonical JSON,
// absent equal to absent. A body that is not an object has no fields.
func sameField(a, b any, name string) (bool, error) {
	oa, _ := a.(*canonical.Object)
	ob, _ := b.(*canonical.Object)
	va, hasA := oa.Get(name)
	vb, hasB := ob.Get(name)
	if !hasA || !hasB {
		return hasA == hasB, nil
	}
	ca, err := canonical.Marshal(va)
	if err != nil {
		return false, err
	}
	cb, err := canonical.Marshal(vb)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ca, cb), nil
}

// CheckTags makes 02 §8.4's check on a version, not a delete, of a
// collection with a valid definition in force (§9.4 step 4.4): a peer that
// can read its content (c not nil) and holds the key it was sealed with (k
// not nil) recomputes its tags under the topics in force and refuses it if
// they are not the set in tags, order and duplicates ignored. With no
// topics in force, any tag on a version whose content it can read is
// refused; that needs no key. With no definition in force, or one
// it can't read, nothing is checked.
func CheckTags(v *record.Version, c *Content, k *TagKey, in InForce) error {
	d, ok, err := in.check(v)
	if err != nil || !ok || v.Deleted || c == nil {
		return err
	}
	if len(d.Topics) == 0 {
		if len(v.Tags) > 0 {
			return refuse(CodeTagMismatch, "tags", "the definition in force for "+v.Collection+" has no topics, so a version carries no tags (02 §8.4)")
		}
		return nil
	}
	if k == nil {
		return nil
	}
	want, err := d.Tags(*k, *c)
	if err != nil {
		return fmt.Errorf("minca/collection: tags: %w", err)
	}
	if !SameTags(want, v.Tags) {
		return refuse(CodeTagMismatch, "tags", "the tags are not those its body and links give under the topics in force for "+v.Collection+": want "+fmt.Sprint(want)+" (02 §8.3, §8.4)")
	}
	return nil
}
