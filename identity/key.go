package identity

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"github.com/minca-go/minca/internal/atomicfile"
)

// Signer signs for one key: versions (02 §3.3) and notes. Sign returns the
// 64-byte P1363 ECDSA P-256 signature over SHA-256(payload).
type Signer interface {
	DID() string
	Sign(payload []byte) ([]byte, error)
}

// PrivateKey is a P-256 private key; it is a [Signer].
type PrivateKey struct {
	key *ecdsa.PrivateKey
	pub *PublicKey
}

var _ Signer = (*PrivateKey)(nil)

// GenerateKey makes a new P-256 key from crypto/rand.
func GenerateKey() (*PrivateKey, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("minca/identity: generating a key: %w", err)
	}
	return fromECDSA(k)
}

// NewPrivateKey wraps an existing P-256 key.
func NewPrivateKey(k *ecdsa.PrivateKey) (*PrivateKey, error) {
	if k == nil {
		return nil, errors.New("minca/identity: nil key")
	}
	return fromECDSA(k)
}

func fromECDSA(k *ecdsa.PrivateKey) (*PrivateKey, error) {
	did, err := DIDOf(&k.PublicKey)
	if err != nil {
		return nil, err
	}
	return &PrivateKey{key: k, pub: &PublicKey{key: &k.PublicKey, did: did}}, nil
}

// DID returns the key's did:key.
func (k *PrivateKey) DID() string { return k.pub.did }

// Public returns the public half.
func (k *PrivateKey) Public() *PublicKey { return k.pub }

// Sign signs payload: ECDSA P-256 over SHA-256, returned as r ‖ s (02
// §3.3). The nonce is RFC 6979's, derived from the key and the digest
// (HMAC-SHA-256), not drawn fresh: any valid signature verifies (02 §3),
// and the node signs every write it makes, so a signature's cost is a
// write's. crypto/ecdsa's hedged nonce runs an HMAC-SHA-512 generator
// seeded afresh each time: about 6 µs more CPU a signature here (35
// against 29 µs) and 6.1 KB allocated against 3.9 KB (bench/REPORT-node.md).
// Signing the same payload twice gives the same signature; it depends on
// no random source, so a weak one can never leak the key through its
// nonces.
func (k *PrivateKey) Sign(payload []byte) ([]byte, error) {
	digest := sha256.Sum256(payload)
	der, err := k.key.Sign(nil, digest[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("minca/identity: signing: %w", err)
	}
	return derToP1363(der)
}

// keyFileType is the PEM block type of a key file: PKCS #8, as openssl and
// every other tool writes a private key.
const keyFileType = "PRIVATE KEY"

// WriteKeyFile writes k to path as PEM PKCS #8 with mode 0600, atomically:
// a file that exists is never overwritten (a key is not to be lost).
func WriteKeyFile(path string, k *PrivateKey) error {
	der, err := x509.MarshalPKCS8PrivateKey(k.key)
	if err != nil {
		return fmt.Errorf("minca/identity: encoding key: %w", err)
	}
	block := &pem.Block{Type: keyFileType, Headers: map[string]string{"DID": k.DID()}, Bytes: der}
	// Create links rather than renames: it fails if path exists, so an
	// old key survives.
	if err := atomicfile.Create(path, pem.EncodeToMemory(block), 0o600); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("minca/identity: %s already exists; not overwriting a key file", path)
		}
		return fmt.Errorf("minca/identity: writing key file: %w", err)
	}
	return nil
}

// ReadKeyFile reads a key file written by WriteKeyFile (or any PEM PKCS #8
// or SEC 1 P-256 key). On Unix it refuses a file that others may read.
func ReadKeyFile(path string) (*PrivateKey, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("minca/identity: key file: %w", err)
	}
	if runtime.GOOS != "windows" && info.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("minca/identity: key file %s has mode %04o; others must not read it (chmod 600 %s)", path, info.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("minca/identity: key file: %w", err)
	}
	return ParseKey(data)
}

// ParseKey reads a PEM P-256 private key (PKCS #8 or SEC 1).
func ParseKey(data []byte) (*PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("minca/identity: key file: no PEM block")
	}
	var k *ecdsa.PrivateKey
	switch block.Type {
	case keyFileType:
		parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("minca/identity: key file: %w", err)
		}
		ek, ok := parsed.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("minca/identity: key file: a %T, not a P-256 key", parsed)
		}
		k = ek
	case "EC PRIVATE KEY":
		ek, err := x509.ParseECPrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("minca/identity: key file: %w", err)
		}
		k = ek
	default:
		return nil, fmt.Errorf("minca/identity: key file: PEM block %q is not a private key", block.Type)
	}
	if k.Curve != elliptic.P256() {
		return nil, fmt.Errorf("minca/identity: key file: curve %s, not P-256", k.Curve.Params().Name)
	}
	return fromECDSA(k)
}

// Scalar returns the key's 32-byte private scalar, big-endian. Secrets
// derived from the account's key (06 §2.5 deriveMemberKeyBytes) start
// from it; it never leaves the process.
func (k *PrivateKey) Scalar() []byte {
	b, err := k.key.Bytes()
	if err != nil {
		panic("minca/identity: a P-256 key without its scalar: " + err.Error()) // a key made here always has one
	}
	return b
}
