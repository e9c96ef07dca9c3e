package identity

import (
	"crypto/hkdf"
	"crypto/sha256"
)

// DeriveSecret derives 32 bytes from the private key for one use, named by
// info: HKDF-SHA-256 with the key's 32-byte big-endian scalar as IKM, an
// empty salt and info. Every holder of the key derives the same bytes,
// nobody else can, and the key itself never leaves: how every device of an
// account derives the same carry space (06 §4.2) and member keys (06 §2.5).
func (k *PrivateKey) DeriveSecret(info string) [32]byte {
	ikm, err := k.key.Bytes()
	if err != nil {
		panic("minca/identity: a P-256 key's scalar: " + err.Error()) // a key made by this package always has one
	}
	out, err := hkdf.Key(sha256.New, ikm, nil, info, 32)
	if err != nil {
		panic("minca/identity: hkdf: " + err.Error()) // only for lengths past 255 blocks
	}
	var b [32]byte
	copy(b[:], out)
	return b
}
