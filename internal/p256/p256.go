// Package p256 verifies ECDSA P-256 / SHA-256 signatures (02 §3.3 step 3)
// faster than crypto/ecdsa when one public key verifies many of them, as
// an author's key does across the thousands of versions it signs: the key
// is expanded once into a table of its multiples ([Precompute]), and a
// verification is then about 63 additions of looked-up points, with no
// doubling, where crypto/ecdsa multiplies the key afresh each time.
//
// It verifies public data only (signatures, digests and keys that anyone
// may read), so nothing here runs in constant time. It accepts exactly
// what crypto/ecdsa.Verify accepts: the tests check it against crypto/ecdsa
// on random keys, digests and signatures, valid and broken, and on
// Wycheproof's P-256 ECDSA test vectors.
//
// A [PublicKey] is immutable once made and safe for concurrent use.
package p256

import (
	"errors"
	"math/big"
	"sync"
)

// keyWindow is the window width of a public key's table: 37 windows of 64
// points, 148 KiB, about 2 ms to build on one core of the machine the
// benchmarks run on. A verification adds one point a window.
const keyWindow = 7

// genWindow is the window width of the generator's table, built once: 26
// windows of 512 points, 832 KiB.
const genWindow = 10

var genTable = sync.OnceValue(func() *table { return newTable(&gen, genWindow) })

// TableBytes is the memory a [PublicKey]'s table holds.
const TableBytes = (256 + keyWindow) / keyWindow * (1 << (keyWindow - 1)) * 64

// PublicKey is a P-256 public key expanded for fast verification.
type PublicKey struct {
	tab *table
}

// ErrKey is returned for an encoding that is not a point of P-256.
var ErrKey = errors.New("minca/p256: not a P-256 public key")

// Precompute expands a public key given as its uncompressed SEC 1 encoding
// (0x04 ‖ X ‖ Y, 65 bytes) — what crypto/ecdsa.PublicKey.Bytes returns.
func Precompute(uncompressed []byte) (*PublicKey, error) {
	if len(uncompressed) != 65 || uncompressed[0] != 4 {
		return nil, ErrKey
	}
	var a affine
	var ok1, ok2 bool
	a.x, ok1 = feFromBytes((*[32]byte)(uncompressed[1:33]))
	a.y, ok2 = feFromBytes((*[32]byte)(uncompressed[33:65]))
	if !ok1 || !ok2 || !a.onCurve() {
		return nil, ErrKey
	}
	return &PublicKey{tab: newTable(&a, keyWindow)}, nil
}

// Verify reports whether sig, r ‖ s as two 32-byte big-endian numbers
// (IEEE P1363, 02 §3.1), is a valid signature by k of digest (a SHA-256
// hash; a longer digest is cut to its first 32 bytes, as crypto/ecdsa
// does).
func (k *PublicKey) Verify(digest, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	if r.Sign() == 0 || s.Sign() == 0 || r.Cmp(bigN) >= 0 || s.Cmp(bigN) >= 0 {
		return false
	}
	if len(digest) > 32 {
		digest = digest[:32]
	}
	e := new(big.Int).SetBytes(digest)
	w := new(big.Int).ModInverse(s, bigN)
	u1 := e.Mul(e, w)
	u1.Mod(u1, bigN)
	u2 := w.Mul(r, w)
	u2.Mod(u2, bigN)

	var d1 [windowsMax]int32
	var d2 [windowsMax]int32
	l1, l2 := limbsOf(u1), limbsOf(u2)
	recode(d1[:windows(genWindow)], &l1, genWindow)
	recode(d2[:windows(keyWindow)], &l2, keyWindow)
	var acc jacobian
	genTable().addMul(&acc, d1[:windows(genWindow)])
	k.tab.addMul(&acc, d2[:windows(keyWindow)])
	if acc.z.isZero() {
		return false
	}
	// x(R) mod n = r, without leaving Jacobian coordinates: X = x·Z², and
	// x is r or, when r + n < p, r + n.
	var zz, want fe
	feSqr(&zz, &acc.z)
	lr := limbsOf(r)
	feMul(&want, &lr, &rr) // r into Montgomery form; r < n < p
	feMul(&want, &want, &zz)
	if want.equal(&acc.x) {
		return true
	}
	rn := new(big.Int).Add(r, bigN)
	if rn.Cmp(bigP) >= 0 {
		return false
	}
	lr = limbsOf(rn)
	feMul(&want, &lr, &rr)
	feMul(&want, &want, &zz)
	return want.equal(&acc.x)
}

var bigN = func() *big.Int {
	n, _ := new(big.Int).SetString("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551", 16)
	return n
}()
