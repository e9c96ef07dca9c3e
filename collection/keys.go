package collection

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/record"
)

// KeyLen is the length of a space key, of K₀, and of the HMAC keys derived
// from them (02 §7.3, §8.2; 03 §8.1).
const KeyLen = 32

// OneKey is the HMAC-SHA-256 key onePer keys are derived under (02 §7.3).
type OneKey [KeyLen]byte

// TagKey is the HMAC-SHA-256 key topic tags are computed under (02 §8.2).
type TagKey [KeyLen]byte

const (
	publicOnePerIKM = "minca/public-one-per/v1|"
	onePerInfo      = "minca/one-per/v1"
	publicTopicsIKM = "minca/public-topics/v1|"
	topicsInfo      = "minca/topic-tags/v1"
)

// derive is HKDF-SHA-256(IKM, salt = "", info, L = 32) (02 §7.3, §8.2).
func derive(ikm []byte, info string) [KeyLen]byte {
	var out [KeyLen]byte
	k, err := hkdf.Key(sha256.New, ikm, nil, info, KeyLen)
	if err != nil {
		// hkdf.Key fails only for a length beyond 255 hash blocks.
		panic("minca/collection: hkdf: " + err.Error())
	}
	copy(out[:], k)
	return out
}

// PublicOneKey is oneKey in a public space: HKDF of
// "minca/public-one-per/v1|" ‖ spaceId (02 §7.3). Anyone can compute it.
func PublicOneKey(spaceID string) OneKey {
	return OneKey(derive([]byte(publicOnePerIKM+spaceID), onePerInfo))
}

// PrivateOneKey is oneKey in a private space: HKDF of the space's first key
// K₀, the one the genesis's encryptionKeyId names (02 §7.3, 03 §8.1). It is
// K₀ and not the current key so that "one per" survives a key change.
func PrivateOneKey(k0 []byte) (OneKey, error) {
	if len(k0) != KeyLen {
		return OneKey{}, fmt.Errorf("minca/collection: K₀ is %d bytes, got %d (03 §8.1)", KeyLen, len(k0))
	}
	return OneKey(derive(k0, onePerInfo)), nil
}

// PublicTagKey is the tag key in a public space: HKDF of
// "minca/public-topics/v1|" ‖ spaceId (02 §8.2).
func PublicTagKey(spaceID string) TagKey {
	return TagKey(derive([]byte(publicTopicsIKM+spaceID), topicsInfo))
}

// PrivateTagKey is the tag key in a private space: HKDF of the space key K
// whose id is the body's keyId, the key the body was sealed with (02 §8.2).
func PrivateTagKey(k []byte) (TagKey, error) {
	if len(k) != KeyLen {
		return TagKey{}, fmt.Errorf("minca/collection: a space key is %d bytes, got %d (02 §8.2, 03 §8.1)", KeyLen, len(k))
	}
	return TagKey(derive(k, topicsInfo)), nil
}

// Content is a version's content as a peer reads it: its body and its links
// — the envelope's links in a public space, the links sealed with the body
// in a private one (02 §5.1).
type Content struct {
	Body  any
	Links []record.Link
}

// PublicContent is the content of a version of a public space: its body and
// its envelope's links. It is nil for a stub, whose body is not held.
func PublicContent(v *record.Version) *Content {
	if v.IsStub() {
		return nil
	}
	return &Content{Body: v.Body, Links: v.Links}
}

// ErrNoKey is what a [*NoKeyError] wraps: a onePer part has no value, so
// the record has no key (02 §7.3).
var ErrNoKey = errors.New("minca/collection: no onePer key")

// NoKeyError names the onePer part that has no value: a link role with no
// link of that role, a field absent from the body, or a root that is empty.
type NoKeyError struct {
	Part Part
}

func (e *NoKeyError) Error() string {
	switch e.Part.Kind {
	case PartLink:
		return "minca/collection: no onePer key: the part " + e.Part.String() + " has no value, the version has no link with rel " + fmt.Sprintf("%q", e.Part.Name) + " (02 §7.3)"
	case PartAuthor:
		return "minca/collection: no onePer key: the part @author has no value, the root is empty (02 §7.3)"
	}
	return "minca/collection: no onePer key: the part " + fmt.Sprintf("%q", e.Part.Name) + " has no value, the body has no top-level field of that name (02 §7.3)"
}

func (e *NoKeyError) Unwrap() error { return ErrNoKey }

// OnePerKey derives the key of a record of collection under a onePer rule
// (02 §7.3): an HMAC under k of the collection and each part's value,
// "one:" and the first 20 bytes in hex; with @author among the parts, that
// name in root's owned key. A part with no value gives a [*NoKeyError].
// root is the writer's root DID (the account, not the session key).
func OnePerKey(k OneKey, collection string, parts []Part, root string, c Content) (string, error) {
	if len(parts) == 0 {
		return "", errors.New("minca/collection: onePer has at least one part (02 §7.3)")
	}
	mac := hmac.New(sha256.New, k[:])
	mac.Write([]byte(collection))
	withAuthor := false
	for _, p := range parts {
		mac.Write([]byte{'\n'})
		switch p.Kind {
		case PartAuthor:
			if root == "" {
				return "", &NoKeyError{Part: p}
			}
			withAuthor = true
			mac.Write([]byte("@author="))
			mac.Write([]byte(root))
		case PartLink:
			to, ok := firstLink(c.Links, p.Name)
			if !ok {
				return "", &NoKeyError{Part: p}
			}
			mac.Write([]byte("link:" + p.Name + "="))
			mac.Write([]byte(to))
		default:
			body, _ := c.Body.(*canonical.Object)
			val, ok := body.Get(p.Name)
			if !ok {
				return "", &NoKeyError{Part: p}
			}
			b, err := canonical.Marshal(val)
			if err != nil {
				return "", fmt.Errorf("minca/collection: onePer part %q: %w", p.Name, err)
			}
			mac.Write([]byte(p.Name + "="))
			mac.Write(b)
		}
	}
	name := "one:" + hex.EncodeToString(mac.Sum(nil)[:20])
	if withAuthor {
		return record.OwnerPart(root) + "." + name, nil
	}
	return name, nil
}

// OnePerKey derives the key a record of this collection must have under its
// onePer rule (02 §7.3); see the package function [OnePerKey]. A definition
// without onePer gives an error.
func (d *Definition) OnePerKey(k OneKey, root string, c Content) (string, error) {
	if !d.Rules.HasOnePer() {
		return "", fmt.Errorf("minca/collection: %s has no onePer rule (02 §7.3)", d.Name)
	}
	return OnePerKey(k, d.Name, d.Rules.OnePer, root, c)
}

func firstLink(links []record.Link, rel string) (string, bool) {
	for _, l := range links {
		if l.Rel == rel {
			return l.To, true
		}
	}
	return "", false
}
