package p256

import (
	"math/big"
	mrand "math/rand/v2"
	"testing"
)

// TestSquareAgainstBig checks feSqr and feMul against math/big on the
// field's edges (0, 1, p−1, limbs all ones or zero) and random elements:
// both must give x·y·2^-256 mod p, fully reduced.
func TestSquareAgainstBig(t *testing.T) {
	rInv := new(big.Int).ModInverse(new(big.Int).Lsh(big.NewInt(1), 256), bigP)
	edges := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), new(big.Int).Sub(bigP, big.NewInt(1)), new(big.Int).Sub(bigP, big.NewInt(2))}
	for _, limbs := range []fe{{p0, 0, 0, 0}, {0, p0, 0, 0}, {0, 0, p0, 0}, {p0, p0, p0, 0}, {0, 0, 0, 1 << 63}, {p0, p1, 0, 0}, {0, 0, 0, p3 - 1}} {
		edges = append(edges, bigOf(&limbs))
	}
	n := 200_000
	if *long {
		n = 20_000_000
	}
	rng := mrand.New(mrand.NewPCG(1, 2))
	check := func(x, y *big.Int) {
		t.Helper()
		fx, fy := limbsOf(x), limbsOf(y)
		want := new(big.Int).Mul(x, y)
		want.Mul(want, rInv).Mod(want, bigP)
		var got fe
		feMul(&got, &fx, &fy)
		if bigOf(&got).Cmp(want) != 0 {
			t.Fatalf("feMul(%x, %x) = %x, want %x", x, y, bigOf(&got), want)
		}
		if x == y {
			feSqr(&got, &fx)
			if bigOf(&got).Cmp(want) != 0 {
				t.Fatalf("feSqr(%x) = %x, want %x", x, bigOf(&got), want)
			}
		}
	}
	for _, x := range edges {
		check(x, x)
		for _, y := range edges {
			check(x, y)
		}
	}
	for range n {
		var a fe
		for i := range a {
			a[i] = rng.Uint64()
		}
		x := new(big.Int).Mod(bigOf(&a), bigP)
		check(x, x)
	}
}

func bigOf(x *fe) *big.Int {
	var b [32]byte
	for i := range 4 {
		for j := range 8 {
			b[31-8*i-j] = byte(x[i] >> (8 * j))
		}
	}
	return new(big.Int).SetBytes(b[:])
}
