package p256

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math/big"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/minca-go/minca/internal/race"
)

var long = flag.Bool("long", false, "check against crypto/ecdsa on millions of random cases")

// TestWycheproof runs Project Wycheproof's P-256 / SHA-256 / P1363 vectors
// (testdata/README.md): every valid signature verifies, every invalid one
// does not, and crypto/ecdsa agrees on each.
func TestWycheproof(t *testing.T) {
	data, err := os.ReadFile("testdata/ecdsa_secp256r1_sha256_p1363_test.json")
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		NumberOfTests int
		TestGroups    []struct {
			PublicKey struct{ Uncompressed string }
			Sha       string
			Tests     []struct {
				TcID    int
				Comment string
				Msg     string
				Sig     string
				Result  string
			}
		}
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, g := range file.TestGroups {
		if g.Sha != "SHA-256" {
			t.Fatalf("group with %s", g.Sha)
		}
		raw := mustHex(t, g.PublicKey.Uncompressed)
		std, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
		ours, perr := Precompute(raw)
		if (err == nil) != (perr == nil) {
			t.Fatalf("key %x: crypto/ecdsa %v, Precompute %v", raw, err, perr)
		}
		if err != nil {
			t.Fatalf("key %x refused: %v", raw, err)
		}
		for _, c := range g.Tests {
			ran++
			msg, sig := mustHex(t, c.Msg), mustHex(t, c.Sig)
			d := sha256.Sum256(msg)
			got := ours.Verify(d[:], sig)
			want := stdVerify(std, d[:], sig)
			if got != want {
				t.Errorf("tc %d (%s): Verify %v, crypto/ecdsa %v", c.TcID, c.Comment, got, want)
			}
			switch c.Result {
			case "valid":
				if !got {
					t.Errorf("tc %d (%s): valid, refused", c.TcID, c.Comment)
				}
			case "invalid":
				if got {
					t.Errorf("tc %d (%s): invalid, accepted", c.TcID, c.Comment)
				}
			}
		}
	}
	if ran != file.NumberOfTests || ran == 0 {
		t.Fatalf("ran %d of %d vectors", ran, file.NumberOfTests)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stdVerify is crypto/ecdsa's verdict on a P1363 signature.
func stdVerify(pub *ecdsa.PublicKey, digest, sig []byte) bool {
	if len(sig) != 64 {
		return false
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	return ecdsa.Verify(pub, digest, r, s)
}

var (
	bigNMinus1 = new(big.Int).Sub(bigN, big.NewInt(1))
	bigPMinusN = new(big.Int).Sub(bigP, bigN)
)

// edge is a 32-byte value chosen to sit at a boundary.
func edge(rng *mrand.Rand) []byte {
	vals := []*big.Int{big.NewInt(0), big.NewInt(1), big.NewInt(2), bigNMinus1, bigN,
		new(big.Int).Add(bigN, big.NewInt(1)), bigPMinusN, new(big.Int).Sub(bigPMinusN, big.NewInt(1)),
		new(big.Int).Sub(bigP, big.NewInt(1)), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))}
	b := make([]byte, 32)
	vals[rng.IntN(len(vals))].FillBytes(b)
	return b
}

// checkCases compares Verify with crypto/ecdsa on n cases made from keys:
// valid signatures, and signatures, digests and keys broken in the ways a
// forger or a faulty peer would break them.
func checkCases(t *testing.T, keys []*ecdsa.PrivateKey, n int, seed uint64) {
	pre := make([]*PublicKey, len(keys))
	for i, k := range keys {
		b, _ := k.PublicKey.Bytes()
		var err error
		if pre[i], err = Precompute(b); err != nil {
			t.Fatal(err)
		}
	}
	var next, mismatches, valid atomic.Int64
	var wg sync.WaitGroup
	for w := range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(seed, uint64(w)))
			for next.Add(1) <= int64(n) {
				ki := rng.IntN(len(keys))
				k := keys[ki]
				var digest [32]byte
				for i := range digest {
					digest[i] = byte(rng.Uint32())
				}
				r, s, err := ecdsa.Sign(rand.Reader, k, digest[:])
				if err != nil {
					t.Error(err)
					return
				}
				sig := make([]byte, 64)
				r.FillBytes(sig[:32])
				s.FillBytes(sig[32:])
				d := digest[:]
				key := pre[ki]
				pub := &k.PublicKey
				switch rng.IntN(10) {
				case 0, 1, 2, 3: // as signed
				case 4: // one bit of the signature flipped
					sig[rng.IntN(64)] ^= 1 << rng.IntN(8)
				case 5: // one bit of the digest flipped
					d = append([]byte(nil), d...)
					d[rng.IntN(32)] ^= 1 << rng.IntN(8)
				case 6: // another key
					o := rng.IntN(len(keys))
					key, pub = pre[o], &keys[o].PublicKey
				case 7: // r or s at a boundary
					copy(sig[32*rng.IntN(2):], edge(rng))
				case 8: // s negated: the other valid signature of the same k
					ns := new(big.Int).Sub(bigN, s)
					ns.FillBytes(sig[32:])
				case 9: // random bytes
					for i := range sig {
						sig[i] = byte(rng.Uint32())
					}
				}
				got := key.Verify(d, sig)
				if got {
					valid.Add(1)
				}
				if want := stdVerify(pub, d, sig); got != want {
					mismatches.Add(1)
					t.Errorf("key %d digest %x sig %x: Verify %v, crypto/ecdsa %v", ki, d, sig, got, want)
				}
			}
		}()
	}
	wg.Wait()
	if mismatches.Load() > 0 {
		t.Fatalf("%d of %d cases disagree with crypto/ecdsa", mismatches.Load(), n)
	}
	// About half the cases are valid signatures: a verifier that refused
	// everything would not pass.
	if v := valid.Load(); v < int64(n)/4 {
		t.Fatalf("only %d of %d cases verified", v, n)
	}
	t.Logf("%d cases, %d valid, all as crypto/ecdsa", n, valid.Load())
}

func newKeys(t *testing.T, n int) []*ecdsa.PrivateKey {
	keys := make([]*ecdsa.PrivateKey, n)
	for i := range keys {
		var err error
		if keys[i], err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestAgainstECDSA checks Verify against crypto/ecdsa on random cases:
// 4,000 in the normal suite, 1,000 under -race (where the field arithmetic
// runs many times slower), 2,000,000 with -long.
func TestAgainstECDSA(t *testing.T) {
	n, nk := 4000, 8
	switch {
	case *long:
		n, nk = 2_000_000, 64
	case race.Enabled:
		n = 1000
	}
	checkCases(t, newKeys(t, nk), n, mrand.Uint64())
}

// TestSmallKeys uses keys whose private scalars are small or near n, so
// that the additions of the generator's and the key's multiples meet equal
// and opposite points (the doubling and infinity cases of the addition).
func TestSmallKeys(t *testing.T) {
	var keys []*ecdsa.PrivateKey
	for _, d := range []*big.Int{big.NewInt(1), big.NewInt(2), big.NewInt(3), new(big.Int).Sub(bigN, big.NewInt(1)),
		new(big.Int).Sub(bigN, big.NewInt(2)), new(big.Int).Lsh(big.NewInt(1), 128)} {
		k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d.FillBytes(make([]byte, 32)))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	n := 600
	if race.Enabled {
		n = 150 // the field arithmetic runs many times slower
	}
	checkCases(t, keys, n, 1)
	// With key 1 (Q = G), u1 = u2 makes R = 2·u1·G: a signature whose
	// digest equals r, the additions of Q's digits land on the points
	// G's digits reached.
	k := keys[0]
	b, _ := k.PublicKey.Bytes()
	pk, err := Precompute(b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		// s = anything, e = r: u1 = u2.
		kk := big.NewInt(int64(1000 + i))
		nonce, err := ecdh.P256().NewPrivateKey(kk.FillBytes(make([]byte, 32)))
		if err != nil {
			t.Fatal(err)
		}
		x := new(big.Int).SetBytes(nonce.PublicKey().Bytes()[1:33])
		r := new(big.Int).Mod(x, bigN)
		// s = k^-1 (e + r·d) with d = 1, e = r: s = 2r/k.
		s := new(big.Int).Mul(r, big.NewInt(2))
		s.Mul(s, new(big.Int).ModInverse(kk, bigN))
		s.Mod(s, bigN)
		sig := make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
		d := r.FillBytes(make([]byte, 32))
		if got, want := pk.Verify(d, sig), stdVerify(&k.PublicKey, d, sig); got != want || !got {
			t.Fatalf("u1 = u2, k = %d: Verify %v, crypto/ecdsa %v", kk, got, want)
		}
	}
}

// TestPrecompute refuses what crypto/ecdsa refuses as a public key: 2,000
// damaged keys, 500 under -race (each a table of multiples to build).
func TestPrecompute(t *testing.T) {
	k := newKeys(t, 1)[0]
	good, _ := k.PublicKey.Bytes()
	rng := mrand.New(mrand.NewPCG(2, 3))
	n := 2000
	if race.Enabled {
		n = 500
	}
	for i := range n {
		b := append([]byte(nil), good...)
		switch i % 4 {
		case 0:
			b[1+rng.IntN(64)] ^= 1 << rng.IntN(8)
		case 1:
			b = b[:rng.IntN(65)]
		case 2:
			b[0] = byte(rng.IntN(8))
		case 3:
			copy(b[1+32*rng.IntN(2):], edge(rng))
		}
		_, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), b)
		_, perr := Precompute(b)
		if (err == nil) != (perr == nil) {
			t.Fatalf("%x: crypto/ecdsa %v, Precompute %v", b, err, perr)
		}
	}
	if _, err := Precompute(good); err != nil {
		t.Fatal(err)
	}
}

// FuzzVerify compares Verify with crypto/ecdsa on a fixed key and any
// digest and signature; the seeds are a valid signature and its edges.
func FuzzVerify(f *testing.F) {
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), mustHexF("c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721"))
	if err != nil {
		f.Fatal(err)
	}
	b, _ := k.PublicKey.Bytes()
	pk, err := Precompute(b)
	if err != nil {
		f.Fatal(err)
	}
	d := sha256.Sum256([]byte("sample"))
	r, s, _ := ecdsa.Sign(rand.Reader, k, d[:])
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	f.Add(d[:], sig)
	f.Add(d[:], make([]byte, 64))
	f.Add([]byte{}, sig)
	f.Fuzz(func(t *testing.T, digest, sig []byte) {
		if got, want := pk.Verify(digest, sig), stdVerify(&k.PublicKey, digest, sig); got != want {
			t.Fatalf("digest %x sig %x: Verify %v, crypto/ecdsa %v", digest, sig, got, want)
		}
	})
}

func mustHexF(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}
