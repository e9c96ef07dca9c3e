package seal

import (
	"slices"
	"strconv"
	"strings"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
)

// MaxEarlier is the most keys a key change's earlier may carry: a space
// can change its key this many times.
const MaxEarlier = 4096

// KeyChangeCollection is the access collection of key changes (02 §4.5).
const KeyChangeCollection = "sys.key"

// KeyChange is a sys.key body in our profile (docs/private-spaces.md, Key
// changes): {keyId, readKey, earlier}. keyId names the new key; readKey is
// the DID of its read key (06 §4.2); earlier is every key before it, K₀
// included, sealed under the new key for the space:
//
//	earlier = base64url( envelope under K_new, binding (earlier, space), of canonical JSON [key text…] sorted by keyId )
//
// The new key itself is in no key change: it reaches members in boxes
// (sys.box) and in invites. Its version's key is "key:" ‖ keyId (the
// space profile's register).
type KeyChange struct {
	KeyID   string
	ReadKey string
	Earlier []byte
}

// NewKeyChange makes the key change to next, carrying earlier sealed
// under it. earlier must hold K₀, the key firstID names, and not next.
func NewKeyChange(space, firstID string, next *Key, earlier []*Key) (*KeyChange, error) {
	ks := slices.Clone(earlier)
	slices.SortFunc(ks, func(a, b *Key) int { return strings.Compare(a.id, b.id) })
	ks = slices.CompactFunc(ks, func(a, b *Key) bool { return a.id == b.id })
	if len(ks) > MaxEarlier {
		return nil, fail(ErrChain, CodeChain, "body.earlier", "a key change carries at most "+strconv.Itoa(MaxEarlier)+" earlier keys")
	}
	hasFirst := false
	texts := make([]any, len(ks))
	for i, k := range ks {
		if k.id == next.id {
			return nil, fail(ErrChain, CodeChain, "body.earlier", "a key change does not carry its own key among the earlier ones")
		}
		hasFirst = hasFirst || k.id == firstID
		texts[i] = k.Text()
	}
	if !hasFirst {
		return nil, fail(ErrChain, CodeChain, "body.earlier", "a key change's earlier keys carry K₀, "+firstID+" (02 §7.3)")
	}
	pt, err := canonical.Marshal(texts)
	if err != nil {
		return nil, err
	}
	env := next.Seal(nil, pt, Binding{Purpose: PurposeEarlier, Space: space})
	return &KeyChange{KeyID: next.id, ReadKey: next.ReadKeyDID(), Earlier: env}, nil
}

// KeyChangeKey is the key of the sys.key record for keyID.
func KeyChangeKey(keyID string) string { return "key:" + keyID }

// Object is the key change as a sys.key body.
func (c *KeyChange) Object() *canonical.Object {
	return canonical.NewObject("keyId", c.KeyID, "readKey", c.ReadKey, "earlier", b64.EncodeToString(c.Earlier))
}

// ReadKeyChange reads a sys.key body of this profile: exactly keyId (a
// keyId), readKey (a P-256 did:key) and earlier (base64url of an
// envelope). What it holds is for [KeyChange.Open]. A body of another
// form carries no key a reader takes (CodeKeyChange), though the space's
// replay still counts the change by its keyId.
func ReadKeyChange(body any) (*KeyChange, error) {
	o, ok := body.(*canonical.Object)
	if !ok || o.Len() != 3 {
		return nil, fail(ErrMalformed, CodeKeyChange, "body", "a sys.key body is an object of exactly keyId, readKey and earlier")
	}
	var c KeyChange
	for _, m := range o.Members {
		s, ok := m.Value.(string)
		if !ok {
			return nil, fail(ErrMalformed, CodeKeyChange, "body."+m.Name, "a sys.key body's "+m.Name+" is a string")
		}
		switch m.Name {
		case "keyId":
			if !ValidKeyID(s) {
				return nil, fail(ErrMalformed, CodeKeyID, "body.keyId", "a keyId is a content id: b and 52 characters of base32")
			}
			c.KeyID = s
		case "readKey":
			if _, err := identity.ParseDID(s); err != nil {
				return nil, fail(ErrMalformed, CodeKeyChange, "body.readKey", "readKey is a P-256 did:key: "+err.Error())
			}
			c.ReadKey = s
		case "earlier":
			env, err := decode64(s, "body.earlier")
			if err != nil {
				return nil, fail(ErrMalformed, CodeKeyChange, "body.earlier", "earlier is base64url without padding")
			}
			if len(env) < Overhead || env[0] != format {
				return nil, fail(ErrMalformed, CodeKeyChange, "body.earlier", "earlier is an envelope: the format byte 0x01 and at least "+strconv.Itoa(Overhead)+" bytes")
			}
			c.Earlier = env
		default:
			return nil, fail(ErrMalformed, CodeKeyChange, "body."+m.Name, "a sys.key body has no member "+strconv.Quote(m.Name))
		}
	}
	return &c, nil
}

// Open opens the earlier keys with next, the change's own key, and checks
// the chain: each is a key, none is next, and K₀ (firstID) is among them
// (02 §7.3: a reader takes no key from a key change whose earlier leaves
// K₀ out). next must be the key keyId names, and readKey its read key.
// Errors are *Error with ErrChain, or ErrOpen when it does not open.
func (c *KeyChange) Open(next *Key, space, firstID string) ([]*Key, error) {
	if next.id != c.KeyID {
		return nil, fail(ErrNoKey, CodeNoKey, "body.keyId", "the key change is to "+c.KeyID+", not "+next.id)
	}
	if c.ReadKey != next.ReadKeyDID() {
		return nil, fail(ErrChain, CodeChain, "body.readKey", "readKey is not the read key of "+c.KeyID)
	}
	pt, err := next.Open(nil, c.Earlier, Binding{Purpose: PurposeEarlier, Space: space}, "body.earlier")
	if err != nil {
		return nil, err
	}
	v, err := canonical.Parse(pt)
	arr, ok := v.([]any)
	if err != nil || !ok || len(arr) == 0 || len(arr) > MaxEarlier {
		return nil, fail(ErrChain, CodeChain, "body.earlier", "the earlier keys are a list of 1–"+strconv.Itoa(MaxEarlier)+" keys")
	}
	out := make([]*Key, 0, len(arr))
	hasFirst := false
	for i, e := range arr {
		s, _ := e.(string)
		k, err := ParseKey(s)
		if err != nil {
			return nil, fail(ErrChain, CodeChain, "body.earlier["+strconv.Itoa(i)+"]", "an earlier key is 32 bytes of base64url")
		}
		if k.id == next.id {
			return nil, fail(ErrChain, CodeChain, "body.earlier["+strconv.Itoa(i)+"]", "a key change does not carry its own key among the earlier ones")
		}
		hasFirst = hasFirst || k.id == firstID
		out = append(out, k)
	}
	if !hasFirst {
		return nil, fail(ErrChain, CodeChain, "body.earlier", "the earlier keys leave K₀ ("+firstID+") out: a reader takes no key from this change (02 §7.3)")
	}
	return out, nil
}
