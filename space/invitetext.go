package space

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/seal"
)

// An invite, of whatever kind, is handed over as text: a prefix naming the
// kind, then base64url (no padding) of the canonical JSON of an object
// {"v": 1, "genesis": {…}, …} whose genesis is the space's and which, for
// a private space and only for one, carries the space's key in use
// ({keyId, key}, seal.InviteKey). A member's invite is the node's
// (docs/spaces.md), a view-only invite the carry profile's
// (docs/carriers.md).

// DecodeInviteText reads invite text of the kind prefix names: surrounding
// white space is ignored; the object may hold v, genesis, keyMember and
// the members named in others, and no other; v is 1; genesis reads as a
// genesis; keyMember holds a space key exactly when the space is private.
// It returns the object, for the kind's other members, the genesis, and
// the key (nil for a public space). An error says what is wrong, for the
// caller to name the field.
func DecodeInviteText(text, prefix, keyMember string, others ...string) (*canonical.Object, *Genesis, *seal.Key, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(text), prefix)
	if !ok {
		return nil, nil, nil, errors.New("it starts " + prefix)
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return nil, nil, nil, errors.New("base64url: " + err.Error())
	}
	v, err := canonical.Parse(raw)
	if err != nil {
		return nil, nil, nil, err
	}
	o, ok := v.(*canonical.Object)
	if !ok {
		return nil, nil, nil, errors.New("it is an object {v, genesis, …}")
	}
	for _, m := range o.Members {
		if m.Name != "v" && m.Name != "genesis" && m.Name != keyMember && !slices.Contains(others, m.Name) {
			return nil, nil, nil, errors.New("it has no member " + m.Name)
		}
	}
	if ver, _ := o.Get("v"); ver != float64(1) {
		return nil, nil, nil, errors.New("v is 1")
	}
	gv, _ := o.Get("genesis")
	g, err := GenesisFromValue(gv)
	if err != nil {
		return nil, nil, nil, errors.New("genesis: " + err.Error())
	}
	kv, hasKey := o.Get(keyMember)
	if hasKey != g.Private() {
		return nil, nil, nil, errors.New(keyMember + ": an invite to a private space carries the key in use (06 §1.3, §4.3), and only a private space's")
	}
	if !hasKey {
		return o, g, nil, nil
	}
	k, err := seal.ParseInviteKey(kv)
	if err != nil {
		return nil, nil, nil, errors.New(keyMember + ": " + err.Error())
	}
	return o, g, k, nil
}

// EncodeInviteText is invite text of the kind prefix names: o, {"v": 1,
// "genesis": {…}, …}, in canonical JSON, base64url without padding.
func EncodeInviteText(prefix string, o *canonical.Object) (string, error) {
	b, err := canonical.Marshal(o)
	if err != nil {
		return "", err
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}
