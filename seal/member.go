package seal

import (
	"crypto/ecdh"
	"crypto/hpke"
	"crypto/rand"
	"fmt"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// Collections of this profile outside the access history (02 §6.4).
const (
	MemberKeyCollection = "sys.memberkey"
	BoxCollection       = "sys.box"
)

const infoMemberKey = "minca/member-key/v1|"

// MemberKey is a member's key for one space: a P-256 key pair for ECDH, the
// recipient key of DHKEM(P-256, HKDF-SHA256) (RFC 9180). Space keys are
// boxed to its public half, which the member publishes in sys.memberkey
// (docs/private-spaces.md, Member keys). It is not the account's signing
// key, and opens nothing but boxes.
type MemberKey struct {
	priv *ecdh.PrivateKey
	pub  *MemberPublic
}

// NewMemberKey makes a member key from crypto/rand.
func NewMemberKey() *MemberKey {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic("minca/seal: generating a P-256 key: " + err.Error()) // crypto/rand never fails
	}
	return memberKeyOf(k)
}

// DeriveMemberKey is the account's member key for a space,
// deriveMemberKeyBytes of 06 §2.5: every device holding the account's
// secret derives the same one, so a box to it opens on each. It is
// DeriveKeyPair of DHKEM(P-256, HKDF-SHA256) (RFC 9180 §7.1.3) of
// HKDF-SHA-256(secret, salt "", info "minca/member-key/v1|" ‖ spaceId).
// secret is the account's private key, at least 32 bytes.
func DeriveMemberKey(secret []byte, spaceID string) (*MemberKey, error) {
	if len(secret) < 32 {
		return nil, fmt.Errorf("minca/seal: an account secret is at least 32 bytes, got %d", len(secret))
	}
	ikm := derive(secret, nil, infoMemberKey+spaceID)
	hk, err := hpke.DHKEM(ecdh.P256()).DeriveKeyPair(ikm[:])
	if err != nil {
		return nil, fmt.Errorf("minca/seal: deriving a member key: %w", err)
	}
	d, err := hk.Bytes()
	if err != nil {
		return nil, fmt.Errorf("minca/seal: deriving a member key: %w", err)
	}
	return ParseMemberKey(d)
}

// ParseMemberKey reads a member key from its 32-byte scalar, as 06 §2.5
// hands one to an app (base64url there).
func ParseMemberKey(b []byte) (*MemberKey, error) {
	k, err := ecdh.P256().NewPrivateKey(b)
	if err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "", "a member key is a P-256 scalar, 32 bytes: "+err.Error())
	}
	return memberKeyOf(k), nil
}

func memberKeyOf(k *ecdh.PrivateKey) *MemberKey {
	pub := k.PublicKey()
	return &MemberKey{priv: k, pub: &MemberPublic{pub: pub, text: b64.EncodeToString(pub.Bytes())}}
}

// Bytes returns the key's 32-byte scalar.
func (m *MemberKey) Bytes() []byte { return m.priv.Bytes() }

// Public is the public half, as sys.memberkey publishes it.
func (m *MemberKey) Public() *MemberPublic { return m.pub }

// MemberPublic is a member key's public half: a P-256 point, as text
// base64url without padding of its 65-byte uncompressed form (SEC 1
// §2.3.3, RFC 9180's SerializePublicKey), 87 characters.
type MemberPublic struct {
	pub  *ecdh.PublicKey
	text string
}

// ParseMemberPublic reads a member key's public half from its text.
func ParseMemberPublic(s string) (*MemberPublic, error) {
	b, err := decode64(s, "key")
	if err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "key", "a member key is base64url of a 65-byte uncompressed P-256 point")
	}
	pub, err := ecdh.P256().NewPublicKey(b)
	if err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "key", "a member key is base64url of a 65-byte uncompressed P-256 point: "+err.Error())
	}
	return &MemberPublic{pub: pub, text: s}, nil
}

// Text is the public key as sys.memberkey and sys.box carry it.
func (p *MemberPublic) Text() string { return p.text }

// Equal reports whether two public keys are the same point.
func (p *MemberPublic) Equal(o *MemberPublic) bool { return o != nil && p.pub.Equal(o.pub) }

// MemberKeyRecord is a sys.memberkey body: {member, key}, the member's root
// DID and its member key's public half. Its version's key is
// MemberKeyKey(member), and a reader takes it only when its root is member:
// the record is signed by the member's account, which binds the key to it.
type MemberKeyRecord struct {
	Member string
	Key    *MemberPublic
}

// MemberKeyKey is the key of a member's sys.memberkey record:
// "memberkey:" ‖ owner(member) (02 §4.1's owner part).
func MemberKeyKey(member string) string { return "memberkey:" + record.OwnerPart(member) }

// Object is the record's body.
func (r *MemberKeyRecord) Object() *canonical.Object {
	return canonical.NewObject("member", r.Member, "key", r.Key.Text())
}

// ReadMemberKey reads a sys.memberkey version whose root is root: its key
// must be MemberKeyKey of its member, and its member root. A delete, which
// has no body, is no member key: the member has none until it writes one.
func ReadMemberKey(v *record.Version, root string) (*MemberKeyRecord, error) {
	if v.Collection != MemberKeyCollection {
		return nil, fail(ErrMalformed, CodeMemberKey, "collection", "a member key is a "+MemberKeyCollection+" record, not "+v.Collection)
	}
	o, ok := v.Body.(*canonical.Object)
	if !ok || o.Len() != 2 {
		return nil, fail(ErrMalformed, CodeMemberKey, "body", "a sys.memberkey body is an object of exactly member and key")
	}
	mv, _ := o.Get("member")
	kv, _ := o.Get("key")
	member, ok1 := mv.(string)
	ks, ok2 := kv.(string)
	if !ok1 || !ok2 {
		return nil, fail(ErrMalformed, CodeMemberKey, "body", "a sys.memberkey body is an object of exactly member and key, both strings")
	}
	if _, err := identity.ParseDID(member); err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "body.member", "member is a P-256 did:key: "+err.Error())
	}
	if member != root {
		return nil, fail(ErrMalformed, CodeMemberKey, "body.member", "a member publishes its own member key: member is "+member+", the version's root "+root)
	}
	if v.Key != MemberKeyKey(member) {
		return nil, fail(ErrMalformed, CodeMemberKey, "key", "a sys.memberkey record's key is "+MemberKeyKey(member)+", not "+v.Key)
	}
	pub, err := ParseMemberPublic(ks)
	if err != nil {
		e := err.(*Error)
		e.Field = "body.key"
		return nil, e
	}
	return &MemberKeyRecord{Member: member, Key: pub}, nil
}
