package seal

import (
	"crypto/hpke"
	"encoding/binary"
	"strconv"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/identity"
	"github.com/minca-go/minca/record"
)

// A box is a space key sealed to one member's member key (sys.box,
// docs/private-spaces.md, Boxes): HPKE (RFC 9180) in base mode with
// DHKEM(P-256, HKDF-SHA256), HKDF-SHA256 and AES-256-GCM — crypto/ecdh
// with a fresh ephemeral key for every box, HKDF and an AEAD, composed
// as the RFC does and as crypto/hpke implements it:
//
//	box = 0x01 ‖ enc (65-byte ephemeral public key) ‖ AES-256-GCM ciphertext of the key's 32 bytes ‖ tag (16)
//	info = "minca/box/v1"; aad = length-prefixed "minca/box/v1", space, keyId, member, to
//
// The aad names the space, the key and the recipient (its root and its
// member key), so a box opens only as what it says it is.
const (
	boxFormat = 0x01
	boxInfo   = "minca/box/v1"
	encLen    = 65
	boxLen    = 1 + encLen + KeyLen + tagLen
)

func boxSuite() (hpke.KDF, hpke.AEAD) { return hpke.HKDFSHA256(), hpke.AES256GCM() }

// Box is a sys.box body: {member, to, keyId, box}. Its version's key is
// BoxKey(keyId, member).
type Box struct {
	Member string        // the recipient's root DID
	To     *MemberPublic // the recipient's member key
	KeyID  string        // the key boxed
	Sealed []byte        // the box
}

// BoxKey is the key of the sys.box record boxing key keyID to member:
// "box:" ‖ keyId ‖ ":" ‖ owner(member), 84 characters.
func BoxKey(keyID, member string) string { return "box:" + keyID + ":" + record.OwnerPart(member) }

func boxAAD(space, keyID, member string, to *MemberPublic) []byte {
	var out []byte
	for _, f := range [...]string{boxInfo, space, keyID, member, to.Text()} {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return out
}

// NewBox boxes k to member's member key to, for space.
func NewBox(k *Key, space, member string, to *MemberPublic) (*Box, error) {
	pk, err := hpke.NewDHKEMPublicKey(to.pub)
	if err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "to", "the member key is no DHKEM(P-256) key: "+err.Error())
	}
	kdf, aead := boxSuite()
	enc, s, err := hpke.NewSender(pk, kdf, aead, []byte(boxInfo))
	if err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "to", "boxing to the member key: "+err.Error())
	}
	ct, err := s.Seal(boxAAD(space, k.id, member, to), k.b[:])
	if err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "to", "boxing to the member key: "+err.Error())
	}
	out := make([]byte, 0, boxLen)
	out = append(out, boxFormat)
	out = append(out, enc...)
	out = append(out, ct...)
	return &Box{Member: member, To: to, KeyID: k.id, Sealed: out}, nil
}

// Object is the box as a sys.box body.
func (b *Box) Object() *canonical.Object {
	return canonical.NewObject("member", b.Member, "to", b.To.Text(), "keyId", b.KeyID, "box", b64.EncodeToString(b.Sealed))
}

// ParseBox reads a sys.box body: exactly member (a P-256 did:key), to (a
// member key), keyId (a keyId) and box (base64url of 114 bytes of format
// 0x01).
func ParseBox(body any) (*Box, error) {
	o, ok := body.(*canonical.Object)
	if !ok || o.Len() != 4 {
		return nil, fail(ErrMalformed, CodeBoxShape, "body", "a sys.box body is an object of exactly member, to, keyId and box")
	}
	str := func(name string) (string, error) {
		v, _ := o.Get(name)
		s, ok := v.(string)
		if !ok {
			return "", fail(ErrMalformed, CodeBoxShape, "body."+name, "a sys.box body's "+name+" is a string")
		}
		return s, nil
	}
	var b Box
	member, err := str("member")
	if err != nil {
		return nil, err
	}
	if _, err := identity.ParseDID(member); err != nil {
		return nil, fail(ErrMalformed, CodeBoxShape, "body.member", "member is a P-256 did:key: "+err.Error())
	}
	b.Member = member
	to, err := str("to")
	if err != nil {
		return nil, err
	}
	if b.To, err = ParseMemberPublic(to); err != nil {
		return nil, fail(ErrMalformed, CodeBoxShape, "body.to", "to is a member key: "+err.(*Error).Message)
	}
	if b.KeyID, err = str("keyId"); err != nil {
		return nil, err
	}
	if !ValidKeyID(b.KeyID) {
		return nil, fail(ErrMalformed, CodeKeyID, "body.keyId", "a keyId is a content id: b and 52 characters of base32")
	}
	sealed, err := str("box")
	if err != nil {
		return nil, err
	}
	if b.Sealed, err = decode64(sealed, "body.box"); err != nil {
		return nil, fail(ErrMalformed, CodeBoxShape, "body.box", "box is base64url without padding")
	}
	if len(b.Sealed) != boxLen || b.Sealed[0] != boxFormat {
		return nil, fail(ErrMalformed, CodeBoxShape, "body.box", "a box is the format byte 0x01 and "+strconv.Itoa(boxLen-1)+" bytes more, got "+strconv.Itoa(len(b.Sealed)))
	}
	return &b, nil
}

// ReadBox reads a sys.box version: its body, and its key, which must be
// BoxKey of the body's keyId and member.
func ReadBox(v *record.Version) (*Box, error) {
	if v.Collection != BoxCollection {
		return nil, fail(ErrMalformed, CodeBoxShape, "collection", "a box is a "+BoxCollection+" record, not "+v.Collection)
	}
	b, err := ParseBox(v.Body)
	if err != nil {
		return nil, err
	}
	if want := BoxKey(b.KeyID, b.Member); v.Key != want {
		return nil, fail(ErrMalformed, CodeBoxShape, "key", "a sys.box record's key is "+want+", not "+v.Key)
	}
	return b, nil
}

// Open opens the box with the member key m, for space: the space key it
// holds, which must be the key its keyId names. A box to another member
// key is CodeBoxTo; one that does not authenticate — changed, or boxed
// for another space, key or member — is CodeBoxOpen.
func (b *Box) Open(m *MemberKey, space string) (*Key, error) {
	if !b.To.Equal(m.pub) {
		return nil, fail(ErrNoKey, CodeBoxTo, "body.to", "the box is for another member key")
	}
	hk, err := hpke.NewDHKEMPrivateKey(m.priv)
	if err != nil {
		return nil, fail(ErrMalformed, CodeMemberKey, "", "the member key is no DHKEM(P-256) key: "+err.Error())
	}
	if len(b.Sealed) != boxLen || b.Sealed[0] != boxFormat {
		return nil, fail(ErrMalformed, CodeBoxShape, "body.box", "a box is the format byte 0x01 and "+strconv.Itoa(boxLen-1)+" bytes more")
	}
	kdf, aead := boxSuite()
	r, err := hpke.NewRecipient(b.Sealed[1:1+encLen], hk, kdf, aead, []byte(boxInfo))
	if err != nil {
		return nil, fail(ErrOpen, CodeBoxOpen, "body.box", "the box's ephemeral key is no P-256 point: "+err.Error())
	}
	pt, err := r.Open(boxAAD(space, b.KeyID, b.Member, b.To), b.Sealed[1+encLen:])
	if err != nil {
		return nil, fail(ErrOpen, CodeBoxOpen, "body.box", "the box does not open with this member key: it was changed, or boxed for another space, key or member")
	}
	k, err := KeyFromBytes(pt)
	if err != nil {
		return nil, fail(ErrPlaintext, CodeKeyID, "body.box", "the box holds no space key")
	}
	if k.id != b.KeyID {
		return nil, fail(ErrPlaintext, CodeKeyID, "body.keyId", "the box holds the key "+k.id+", not "+b.KeyID+" as it says")
	}
	return k, nil
}
