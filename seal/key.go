package seal

import (
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"sync"

	"github.com/minca-go/minca/canonical"
	"github.com/minca-go/minca/collection"
	"github.com/minca-go/minca/identity"
)

// KeyLen is the length of a space key (docs/private-spaces.md, Space keys).
const KeyLen = 32

// Labels of the keys derived from a space key, each by HKDF-SHA-256 with
// an empty salt and its own info, so no derived value says anything of
// another (docs/private-spaces.md, Space keys).
const (
	infoKeyID   = "minca/key-id/v1"
	infoReadKey = "minca/read-key/v1"
	infoSeal    = "minca/seal/v1"
)

var b64 = base64.RawURLEncoding

// Key is a space key: 32 random bytes, named by its keyId. It seals bodies,
// links and files for the space (docs/private-spaces.md). It keeps, beside
// the bytes, the state of its sealing (a subkey and its salt) and the
// subkeys it has opened with, so one *Key is shared by everything that
// seals or opens under it. Safe for concurrent use. Its String never shows
// the secret.
type Key struct {
	b      [KeyLen]byte
	digest canonical.ID // the keyId's
	id     string       // its text

	mu     sync.Mutex
	sealer *subkey                   // the subkey this process seals under
	opened map[[saltLen]byte]*subkey // subkeys opened with, bounded
	ads    sync.Pool                 // *[]byte buffers for associated data
}

// NewKey makes a new space key from crypto/rand.
func NewKey() *Key {
	var b [KeyLen]byte
	rand.Read(b[:]) // never fails (crypto/rand, Go 1.24)
	return newKey(b)
}

// KeyFromBytes is the key of 32 bytes.
func KeyFromBytes(b []byte) (*Key, error) {
	if len(b) != KeyLen {
		return nil, fail(ErrMalformed, CodeKeyInvalid, "", fmt.Sprintf("a space key is %d bytes, got %d", KeyLen, len(b)))
	}
	return newKey([KeyLen]byte(b)), nil
}

// ParseKey reads a key as text: base64url without padding of its 32 bytes
// (43 characters), as an invite carries it.
func ParseKey(s string) (*Key, error) {
	if len(s) != b64.EncodedLen(KeyLen) {
		return nil, fail(ErrMalformed, CodeKeyInvalid, "", fmt.Sprintf("a space key is %d characters of base64url, got %d", b64.EncodedLen(KeyLen), len(s)))
	}
	b, err := decode64(s, "")
	if err != nil {
		return nil, fail(ErrMalformed, CodeKeyInvalid, "", "a space key is base64url without padding")
	}
	return KeyFromBytes(b)
}

func newKey(b [KeyLen]byte) *Key {
	d := canonical.ID(derive(b[:], nil, infoKeyID))
	return &Key{b: b, digest: d, id: d.String()}
}

// ID is the key's keyId: "b" and base32 of HKDF-SHA-256(K, salt "", info
// "minca/key-id/v1"), the form of a content id (02 §2). It names the key
// and says nothing of it.
func (k *Key) ID() string { return k.id }

// Bytes returns a copy of the key's 32 bytes.
func (k *Key) Bytes() []byte { return append([]byte(nil), k.b[:]...) }

// Text is the key as ParseKey reads it: base64url, no padding.
func (k *Key) Text() string { return b64.EncodeToString(k.b[:]) }

// String names the key by its id, never showing it.
func (k *Key) String() string { return "space key " + k.id }

// Equal reports whether two keys are the same key.
func (k *Key) Equal(o *Key) bool { return o != nil && hmac.Equal(k.b[:], o.b[:]) }

// OneKey is the key onePer keys are derived under when k is the space's
// first key K₀ (02 §7.3); collection derives it.
func (k *Key) OneKey() collection.OneKey {
	o, _ := collection.PrivateOneKey(k.b[:]) // k.b is KeyLen bytes
	return o
}

// TagKey is the key topic tags are computed under for a body sealed with k
// (02 §8.2: "the space key K whose id is the body's keyId").
func (k *Key) TagKey() collection.TagKey {
	t, _ := collection.PrivateTagKey(k.b[:])
	return t
}

// ReadSeed is the seed of the key's read key, deriveReadSeed of 06 §4.2:
// HKDF-SHA-256(K, salt "", info "minca/read-key/v1"). A carrier's pass
// holds it; it is derived one way and opens nothing (06 §4.1).
func (k *Key) ReadSeed() [32]byte { return derive(k.b[:], nil, infoReadKey) }

// ReadKey is the P-256 key of a read seed, the one a carrier proves to
// peers: the scalar DeriveKeyPair of DHKEM(P-256, HKDF-SHA256) makes of
// the seed (RFC 9180 §7.1.3), used as an ECDSA key. Its DID is what each
// key change names as readKey, and what 06 §4.2's genesis readKey names
// for K₀.
func ReadKey(seed [32]byte) (*identity.PrivateKey, error) {
	return p256FromSeed(seed[:])
}

// ReadKeyDID is the did:key of the read key of k.
func (k *Key) ReadKeyDID() string {
	rk, err := ReadKey(k.ReadSeed())
	if err != nil {
		// DeriveKeyPair fails only after 255 rejected candidates, with
		// probability below 2^-8000.
		panic("minca/seal: deriving a read key: " + err.Error())
	}
	return rk.DID()
}

// p256FromSeed derives a P-256 key from ikm as RFC 9180's DeriveKeyPair for
// DHKEM(P-256, HKDF-SHA256) does, and returns it as an ECDSA key.
func p256FromSeed(ikm []byte) (*identity.PrivateKey, error) {
	priv, err := hpke.DHKEM(ecdh.P256()).DeriveKeyPair(ikm)
	if err != nil {
		return nil, fmt.Errorf("minca/seal: deriving a P-256 key: %w", err)
	}
	d, err := priv.Bytes()
	if err != nil {
		return nil, fmt.Errorf("minca/seal: deriving a P-256 key: %w", err)
	}
	ek, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, fmt.Errorf("minca/seal: deriving a P-256 key: %w", err)
	}
	return identity.NewPrivateKey(ek)
}

// ValidKeyID reports whether s has the form of a keyId: a content id, "b"
// and 52 characters of lower-case base32.
func ValidKeyID(s string) bool {
	_, err := canonical.ParseID(s)
	return err == nil
}

// derive is HKDF-SHA-256(ikm, salt, info), 32 bytes.
func derive(ikm, salt []byte, info string) [32]byte {
	out, err := hkdf.Key(sha256.New, ikm, salt, info, 32)
	if err != nil {
		panic("minca/seal: hkdf: " + err.Error()) // only for lengths past 255 blocks
	}
	return [32]byte(out)
}

// subkey is an AES-256-GCM instance under HKDF-SHA-256(K, salt, info
// "minca/seal/v1") (docs/private-spaces.md, The envelope).
type subkey struct {
	salt  [saltLen]byte
	aead  cipher.AEAD
	count uint64 // envelopes sealed under it
}
