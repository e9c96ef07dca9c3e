package spacetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"

	"github.com/minca-go/minca/identity"
)

// DocKey is the key called name in the worked examples of docs/spaces.md
// (and docs/carriers.md, which uses the same people): the P-256 key whose
// scalar is SHA-256 of "minca docs/spaces.md " ‖ name, so the examples
// sign the same every time.
func DocKey(name string) (*identity.PrivateKey, error) {
	sum := sha256.Sum256([]byte("minca docs/spaces.md " + name))
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), sum[:])
	if err != nil {
		return nil, err
	}
	return identity.NewPrivateKey(k)
}
