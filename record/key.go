package record

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"fmt"
	"strings"
)

// KeyKind is which of 02 §4.1's kinds a key's form is.
type KeyKind int

const (
	// KindOther is a valid key of neither kind: the sys.* formats.
	KindOther KeyKind = iota
	// KindOwned is owner.name: ^[a-z2-7]{26}\.[a-z0-9:._-]{1,101}$.
	KindOwned
	// KindShared is a onePer key without @author: ^one:[0-9a-f]{40}$.
	KindShared
)

func (k KeyKind) String() string {
	switch k {
	case KindOwned:
		return "owned"
	case KindShared:
		return "shared"
	}
	return "other"
}

// OwnerPartLen is the length of an owned key's owner part (02 §4.1).
const OwnerPartLen = 26

var base32Lower = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// OwnerPart is owner(root) = lowercase(base32(SHA-256("minca/record-owner/v1|"
// ‖ root)[0..16))): 26 characters naming the account (02 §4.1).
func OwnerPart(root string) string {
	var b [OwnerPartLen]byte
	return string(appendOwnerPart(b[:0], root))
}

// appendOwnerPart appends [OwnerPart] of root to dst: with dst on the
// caller's stack, no allocation.
func appendOwnerPart(dst []byte, root string) []byte {
	var in [128]byte // a did:key root fits; a longer one is copied to the heap
	sum := sha256.Sum256(append(append(in[:0], ownerPrefix...), root...))
	return base32Lower.AppendEncode(dst, sum[:16])
}

const ownerPrefix = "minca/record-owner/v1|"

// FreshKey returns a new owned key of root's: its owner part and a name of
// 16 random bytes in base32 (02 §4.1).
func FreshKey(root string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("minca/record: fresh key: %w", err)
	}
	var out [OwnerPartLen + 1 + OwnerPartLen]byte // 16 bytes as 26 characters, as the owner part
	k := append(appendOwnerPart(out[:0], root), '.')
	return string(base32Lower.AppendEncode(k, b[:])), nil
}

// ChosenKey returns root's owned key for a name an app chose, such as
// "settings" (02 §4.1). The name must be 1–101 characters of [a-z0-9:._-].
func ChosenKey(root, name string) (string, error) {
	if len(name) < 1 || len(name) > MaxOwnedNameLen || !keyChars(name) {
		return "", fmt.Errorf("minca/record: a chosen name is 1–101 characters of [a-z0-9:._-] (02 §4.1, §10): %q", name)
	}
	return OwnerPart(root) + "." + name, nil
}

// validKey reports whether s matches ^[a-z0-9:._-]{1,128}$ (02 §4.1).
func validKey(s string) bool {
	return len(s) >= 1 && len(s) <= MaxKeyLen && keyChars(s)
}

// ValidKey reports whether s is a record key (02 §4.1, §4.6 #1).
func ValidKey(s string) bool { return validKey(s) }

func keyChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == ':' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// KindOf tells which kind a valid key's form is (02 §4.1).
func KindOf(key string) KeyKind {
	if isShared(key) {
		return KindShared
	}
	if len(key) >= OwnerPartLen+2 && len(key) <= OwnerPartLen+1+MaxOwnedNameLen && key[OwnerPartLen] == '.' &&
		isBase32Lower(key[:OwnerPartLen]) && keyChars(key[OwnerPartLen+1:]) {
		return KindOwned
	}
	return KindOther
}

// Owner returns an owned key's owner part, or "" for another kind.
func Owner(key string) string {
	if KindOf(key) != KindOwned {
		return ""
	}
	return key[:OwnerPartLen]
}

// IsOnePerForm reports whether key has the form of a onePer key (02 §4.1,
// §7.3): shared (one:<40 hex>), or owned with a name of that form. The
// second result says whether it names an author (the owned form).
func IsOnePerForm(key string) (onePer, withAuthor bool) {
	switch KindOf(key) {
	case KindShared:
		return true, false
	case KindOwned:
		return isShared(key[OwnerPartLen+1:]), true
	}
	return false, false
}

func isShared(s string) bool {
	if len(s) != 44 || !strings.HasPrefix(s, "one:") {
		return false
	}
	for i := 4; i < 44; i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func isBase32Lower(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return false
		}
	}
	return true
}

// IsSys reports whether a collection is one of the protocol's, sys.*
// (02 §6.4).
func IsSys(collection string) bool { return strings.HasPrefix(collection, "sys.") }

// CheckFirstKey makes the checks of 02 §4.1 that need only the envelope and
// the root: outside sys.*, a first version is at an owned key of its root's
// or a shared key; in sys.*, at neither. Later versions are not checked.
// Whether a onePer form is allowed by the rules is collection's (§4.1).
func CheckFirstKey(v *Version, root string) error {
	if v.Seq != 0 {
		return nil
	}
	kind := KindOf(v.Key)
	if IsSys(v.Collection) {
		if kind != KindOther {
			return refuse(CodeKeySys, "key", "a first version in a sys.* collection is never at an owned or shared key (02 §4.1)")
		}
		return nil
	}
	switch kind {
	case KindOther:
		return refuse(CodeKeyKind, "key", "a first version outside sys.* is at an owned key (owner.name) or a shared key (one:…) (02 §4.1)")
	case KindOwned:
		var b [OwnerPartLen]byte
		if v.Key[:OwnerPartLen] != string(appendOwnerPart(b[:0], root)) {
			return refuse(CodeKeyOwner, "key", "the owner part of this owned key is not owner(root) of the version's root "+root+" (02 §4.1)")
		}
	}
	return nil
}
