package identity

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/minca-go/minca/internal/p256"
)

// DIDPrefix starts every did:key of ours: the method and the multibase
// prefix "z" of base58btc.
const DIDPrefix = "did:key:z"

// p256Multicodec is the varint of multicodec 0x1200, p256-pub.
var p256Multicodec = [2]byte{0x80, 0x24}

// maxDIDLen bounds a did:key string: 35 bytes encode to at most 49
// base58 characters; anything longer is refused before decoding.
const maxDIDLen = len(DIDPrefix) + 52

// ErrDID is wrapped by every refusal of a did:key string.
var ErrDID = errors.New("minca/identity: not a P-256 did:key")

// PublicKey is a P-256 public key and its did:key.
type PublicKey struct {
	key *ecdsa.PublicKey
	did string
	// fast is the key expanded for fast verification, once a [Resolver]
	// found it signs often (nil until then, and again once dropped).
	fast atomic.Pointer[p256.PublicKey]
	// uses counts the resolver's look-ups of the key since it last
	// looked (resolver.go).
	uses atomic.Int64
}

// DID returns the key's did:key.
func (k *PublicKey) DID() string { return k.did }

// ECDSA returns the key for use with crypto/ecdsa.
func (k *PublicKey) ECDSA() *ecdsa.PublicKey { return k.key }

// Verify reports whether sig, 64 bytes r ‖ s, is a valid ECDSA P-256 /
// SHA-256 signature by k over payload (02 §3.3 step 3).
func (k *PublicKey) Verify(payload, sig []byte) bool {
	digest := sha256.Sum256(payload)
	return k.VerifyDigest(digest[:], sig)
}

// VerifyDigest is Verify with the SHA-256 of the payload already taken.
func (k *PublicKey) VerifyDigest(digest, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	if f := k.fast.Load(); f != nil {
		return f.Verify(digest, sig)
	}
	var der [72]byte
	return ecdsa.VerifyASN1(k.key, digest, p1363ToDER(der[:0], sig))
}

// ParseDID resolves a did:key to its P-256 public key (02 §3.3 step 2). It
// refuses anything else with an error wrapping [ErrDID] that says why.
func ParseDID(did string) (*PublicKey, error) {
	if !strings.HasPrefix(did, DIDPrefix) {
		return nil, fmt.Errorf("%w: does not start with %q", ErrDID, DIDPrefix)
	}
	if len(did) > maxDIDLen {
		return nil, fmt.Errorf("%w: %d characters is too long", ErrDID, len(did))
	}
	raw, err := decodeBase58(did[len(DIDPrefix):], 35)
	if err != nil {
		return nil, fmt.Errorf("%w: the key part is not base58btc", ErrDID)
	}
	if len(raw) != 35 || raw[0] != p256Multicodec[0] || raw[1] != p256Multicodec[1] {
		return nil, fmt.Errorf("%w: not a p256-pub multicodec key (0x80 0x24 and 33 bytes)", ErrDID)
	}
	x, y := elliptic.UnmarshalCompressed(elliptic.P256(), raw[2:])
	if x == nil {
		return nil, fmt.Errorf("%w: the compressed point is not on P-256", ErrDID)
	}
	uncompressed := make([]byte, 65)
	uncompressed[0] = 4
	x.FillBytes(uncompressed[1:33])
	y.FillBytes(uncompressed[33:])
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), uncompressed)
	if err != nil {
		return nil, fmt.Errorf("%w: the point is not a P-256 public key", ErrDID)
	}
	// Only one text names a key: refuse one that decodes but would encode
	// differently (leading '1's, say), so a DID compares by string.
	k := &PublicKey{key: pub, did: did}
	if encodeDID(raw[2:]) != did {
		return nil, fmt.Errorf("%w: not in its one canonical form", ErrDID)
	}
	return k, nil
}

// DIDOf returns the did:key of a P-256 public key.
func DIDOf(pub *ecdsa.PublicKey) (string, error) {
	if pub == nil || pub.Curve != elliptic.P256() {
		return "", errors.New("minca/identity: not a P-256 key")
	}
	b, err := pub.Bytes() // 0x04 ‖ X ‖ Y
	if err != nil || len(b) != 65 {
		return "", errors.New("minca/identity: not a valid P-256 public key")
	}
	// SEC 1 compressed form: 0x02 or 0x03 by the parity of Y, then X.
	compressed := make([]byte, 33)
	compressed[0] = 2 | b[64]&1
	copy(compressed[1:], b[1:33])
	return encodeDID(compressed), nil
}

func encodeDID(compressed []byte) string {
	raw := make([]byte, 0, 35)
	raw = append(raw, p256Multicodec[:]...)
	raw = append(raw, compressed...)
	return DIDPrefix + encodeBase58(raw)
}

// SignatureDER returns a 64-byte r ‖ s signature (02 §3.3) as the ASN.1
// DER SEQUENCE crypto/ecdsa reads, for benchmarks whose bound calls
// crypto/ecdsa directly. It returns nil when sig is not 64 bytes.
func SignatureDER(sig []byte) []byte {
	if len(sig) != 64 {
		return nil
	}
	return p1363ToDER(nil, sig)
}

// p1363ToDER turns r ‖ s into the ASN.1 DER SEQUENCE crypto/ecdsa reads.
func p1363ToDER(dst, sig []byte) []byte {
	start := len(dst)
	dst = append(dst, 0x30, 0)
	dst = appendDERInt(dst, trimInt(sig[:32]))
	dst = appendDERInt(dst, trimInt(sig[32:]))
	dst[start+1] = byte(len(dst) - start - 2)
	return dst
}

func trimInt(b []byte) []byte {
	for len(b) > 1 && b[0] == 0 {
		b = b[1:]
	}
	return b
}

func appendDERInt(dst, b []byte) []byte {
	if b[0]&0x80 != 0 {
		dst = append(dst, 0x02, byte(len(b)+1), 0)
	} else {
		dst = append(dst, 0x02, byte(len(b)))
	}
	return append(dst, b...)
}

// derToP1363 turns crypto/ecdsa's DER signature into r ‖ s.
func derToP1363(der []byte) ([]byte, error) {
	// SEQUENCE { INTEGER r, INTEGER s }, each at most 33 bytes here.
	if len(der) < 8 || der[0] != 0x30 || int(der[1]) != len(der)-2 {
		return nil, errBadDER
	}
	out := make([]byte, 64)
	rest := der[2:]
	for i := 0; i < 2; i++ {
		if len(rest) < 2 || rest[0] != 0x02 || int(rest[1]) > len(rest)-2 {
			return nil, errBadDER
		}
		// The integer's big-endian bytes, its leading zeros dropped, must
		// fit 32 bytes; they are written right-aligned.
		n := rest[2 : 2+int(rest[1])]
		for len(n) > 0 && n[0] == 0 {
			n = n[1:]
		}
		if len(n) > 32 {
			return nil, errBadDER
		}
		copy(out[i*32+32-len(n):i*32+32], n)
		rest = rest[2+int(rest[1]):]
	}
	return out, nil
}

// errBadDER is derToP1363's refusal, made once: signing calls it each time.
var errBadDER = errors.New("minca/identity: malformed DER signature")
