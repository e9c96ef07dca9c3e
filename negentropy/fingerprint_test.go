package negentropy

import (
	"crypto/sha256"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// refFingerprint computes §Fingerprint Algorithm with math/big.
func refFingerprint(ids []ID) Fingerprint {
	sum := new(big.Int)
	for _, id := range ids {
		be := slices.Clone(id[:])
		slices.Reverse(be)
		sum.Add(sum, new(big.Int).SetBytes(be))
	}
	sum.Mod(sum, new(big.Int).Lsh(big.NewInt(1), 256))
	le := make([]byte, 32)
	sum.FillBytes(le)
	slices.Reverse(le)
	h := sha256.Sum256(AppendVarint(le, uint64(len(ids))))
	return Fingerprint(h[:16])
}

func TestFingerprint(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var ff ID
	for i := range ff {
		ff[i] = 0xff
	}
	for n := range 300 {
		ids := make([]ID, n)
		for i := range ids {
			if r.IntN(3) == 0 {
				ids[i] = ff // force carries
				continue
			}
			for j := range ids[i] {
				ids[i][j] = byte(r.Uint32())
			}
		}
		var acc Accumulator
		for i := range ids {
			acc.AddID(&ids[i])
		}
		if got, want := acc.Fingerprint(uint64(n)), refFingerprint(ids); got != want {
			t.Fatalf("n=%d: fingerprint %x, want %x", n, got, want)
		}
		// Sub undoes Add.
		var part Accumulator
		for i := range ids[:n/2] {
			part.AddID(&ids[i])
		}
		acc.Sub(&part)
		if got, want := acc.Fingerprint(uint64(n-n/2)), refFingerprint(ids[n/2:]); got != want {
			t.Fatalf("n=%d: fingerprint after Sub %x, want %x", n, got, want)
		}
	}
}
