package p256

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"math/big"
	"runtime"
	"syscall"
	"testing"
)

// cpuLoop runs f b.N times and reports the thread's CPU time an
// operation too: on a shared machine, wall time moves with the load.
func cpuLoop(b *testing.B, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	for b.Loop() {
		f()
	}
	b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
}

func threadCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func benchKey(b *testing.B) (*ecdsa.PrivateKey, []byte, []byte, *big.Int, *big.Int) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	pub, _ := k.PublicKey.Bytes()
	d := sha256.Sum256([]byte("a signed part"))
	r, s, err := ecdsa.Sign(rand.Reader, k, d[:])
	if err != nil {
		b.Fatal(err)
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return k, pub, sig, r, s
}

// BenchmarkVerify is a verification with the key's table built.
func BenchmarkVerify(b *testing.B) {
	_, pub, sig, _, _ := benchKey(b)
	k, err := Precompute(pub)
	if err != nil {
		b.Fatal(err)
	}
	d := sha256.Sum256([]byte("a signed part"))
	genTable()
	cpuLoop(b, func() {
		if !k.Verify(d[:], sig) {
			b.Fatal("refused")
		}
	})
}

// BenchmarkECDSA is crypto/ecdsa's verification of the same, the bound.
func BenchmarkECDSA(b *testing.B) {
	k, _, _, r, s := benchKey(b)
	d := sha256.Sum256([]byte("a signed part"))
	cpuLoop(b, func() {
		if !ecdsa.Verify(&k.PublicKey, d[:], r, s) {
			b.Fatal("refused")
		}
	})
}

// BenchmarkPrecompute is building a key's table.
func BenchmarkPrecompute(b *testing.B) {
	_, pub, _, _, _ := benchKey(b)
	cpuLoop(b, func() {
		if _, err := Precompute(pub); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkFieldMul(b *testing.B) {
	x, y := feOne, gen.x
	cpuLoop(b, func() { feMul(&x, &x, &y) })
}
