package p256

import (
	"encoding/binary"
	"math/big"
	"math/bits"
)

// fe is an element of the field of P-256, p = 2^256 − 2^224 + 2^192 + 2^96
// − 1, in Montgomery form (x·2^256 mod p), as four little-endian 64-bit
// limbs, always fully reduced (< p). Nothing here runs in constant time:
// everything verified is public.
type fe [4]uint64

// The limbs of p.
const (
	p0 = 0xffffffffffffffff
	p1 = 0x00000000ffffffff
	p2 = 0
	p3 = 0xffffffff00000001
)

var (
	bigP = func() *big.Int {
		p, _ := new(big.Int).SetString("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff", 16)
		return p
	}()
	// rr is 2^512 mod p, which takes a number into Montgomery form.
	rr = limbsOf(new(big.Int).Exp(big.NewInt(2), big.NewInt(512), bigP))
	// feOne is 1 in Montgomery form (2^256 mod p).
	feOne = func() fe {
		var z fe
		feMul(&z, &fe{1}, &rr)
		return z
	}()
)

// limbsOf returns the limbs of x, which is below 2^256.
func limbsOf(x *big.Int) fe {
	var b [32]byte
	x.FillBytes(b[:])
	return limbsBE(&b)
}

// limbsBE reads a 32-byte big-endian number into limbs, as it is (not into
// Montgomery form).
func limbsBE(b *[32]byte) fe {
	return fe{
		binary.BigEndian.Uint64(b[24:]),
		binary.BigEndian.Uint64(b[16:]),
		binary.BigEndian.Uint64(b[8:]),
		binary.BigEndian.Uint64(b[0:]),
	}
}

// lessThan reports whether a < b, both as plain numbers.
func lessThan(a, b *fe) bool {
	_, c := bits.Sub64(a[0], b[0], 0)
	_, c = bits.Sub64(a[1], b[1], c)
	_, c = bits.Sub64(a[2], b[2], c)
	_, c = bits.Sub64(a[3], b[3], c)
	return c != 0
}

// feFromBytes reads a big-endian number below p into Montgomery form; ok is
// false when it is not below p.
func feFromBytes(b *[32]byte) (z fe, ok bool) {
	x := limbsBE(b)
	if !lessThan(&x, &fe{p0, p1, p2, p3}) {
		return z, false
	}
	feMul(&z, &x, &rr)
	return z, true
}

// mac returns a + b·c + d as lo, hi; it cannot overflow 128 bits.
func mac(a, b, c, d uint64) (lo, hi uint64) {
	hi, lo = bits.Mul64(b, c)
	var k uint64
	lo, k = bits.Add64(lo, a, 0)
	hi += k
	lo, k = bits.Add64(lo, d, 0)
	hi += k
	return lo, hi
}

// feMul sets z = x·y·2^-256 mod p: word-by-word Montgomery multiplication,
// using that −p^-1 ≡ 1 mod 2^64 and the shape of p's limbs (no
// multiplication by them: see below; p2 is zero).
func feMul(z, x, y *fe) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	var t0, t1, t2, t3, t4, t5, c, yi uint64
	// Each round adds x·y[i], then reduces by one limb (montStep).
	// y[0]
	yi = y[0]
	t0, c = mac(t0, x0, yi, 0)
	t1, c = mac(t1, x1, yi, c)
	t2, c = mac(t2, x2, yi, c)
	t3, c = mac(t3, x3, yi, c)
	t4, t5 = bits.Add64(t4, c, 0)
	t0, t1, t2, t3, c = montStep(t0, t1, t2, t3, t4)
	t4 = t5 + c
	// y[1]
	yi = y[1]
	t0, c = mac(t0, x0, yi, 0)
	t1, c = mac(t1, x1, yi, c)
	t2, c = mac(t2, x2, yi, c)
	t3, c = mac(t3, x3, yi, c)
	t4, t5 = bits.Add64(t4, c, 0)
	t0, t1, t2, t3, c = montStep(t0, t1, t2, t3, t4)
	t4 = t5 + c
	// y[2]
	yi = y[2]
	t0, c = mac(t0, x0, yi, 0)
	t1, c = mac(t1, x1, yi, c)
	t2, c = mac(t2, x2, yi, c)
	t3, c = mac(t3, x3, yi, c)
	t4, t5 = bits.Add64(t4, c, 0)
	t0, t1, t2, t3, c = montStep(t0, t1, t2, t3, t4)
	t4 = t5 + c
	// y[3]
	yi = y[3]
	t0, c = mac(t0, x0, yi, 0)
	t1, c = mac(t1, x1, yi, c)
	t2, c = mac(t2, x2, yi, c)
	t3, c = mac(t3, x3, yi, c)
	t4, t5 = bits.Add64(t4, c, 0)
	t0, t1, t2, t3, c = montStep(t0, t1, t2, t3, t4)
	t4 = t5 + c
	reduceOnce(z, t0, t1, t2, t3, t4)
}

// montStep is one round of the Montgomery reduction: it adds m·p with
// m = t0, which zeroes the low limb, and drops that limb, returning the
// four limbs above and the carry out of the top. p's limbs make m·p
// shifts and subtractions: m·p0 + m (the low limb) is m·2^64, so limb 1
// takes m·p1 + m = m·2^32; p2 is zero; and m·p3 = m·2^64 − m·2^32 + m,
// whose low limb is m − (m<<32) and high limb m − (m>>32) less that
// borrow.
func montStep(t0, t1, t2, t3, t4 uint64) (r0, r1, r2, r3, carry uint64) {
	m := t0
	ml, b := bits.Sub64(m, m<<32, 0)
	var c uint64
	r0, c = bits.Add64(t1, m<<32, 0)
	r1, c = bits.Add64(t2, m>>32, c)
	r2, c = bits.Add64(t3, ml, c)
	r3, c = bits.Add64(t4, m-m>>32-b, c)
	return r0, r1, r2, r3, c
}

// feSqr sets z = x²·2^-256 mod p: the product's six cross terms once,
// doubled, and the four squares (ten multiplications where feMul makes
// sixteen), then four rounds of the Montgomery reduction of feMul on its
// low half and the high half added.
func feSqr(z, x *fe) {
	x0, x1, x2, x3 := x[0], x[1], x[2], x[3]
	var r1, r2, r3, r4, r5, r6, r7, c, hi uint64
	// The cross terms xi·xj, i < j, at limb i+j.
	r2, r1 = bits.Mul64(x0, x1)
	r2, r3 = mac(r2, x0, x2, 0)
	r3, r4 = mac(r3, x0, x3, 0)
	r3, c = mac(r3, x1, x2, 0)
	r4, c = mac(r4, x1, x3, c)
	r5 = c
	r5, r6 = mac(r5, x2, x3, 0)
	// Doubled.
	r7 = r6 >> 63
	r6 = r6<<1 | r5>>63
	r5 = r5<<1 | r4>>63
	r4 = r4<<1 | r3>>63
	r3 = r3<<1 | r2>>63
	r2 = r2<<1 | r1>>63
	r1 <<= 1
	// The squares xi² at limb 2i.
	var r0 uint64
	hi, r0 = bits.Mul64(x0, x0)
	r1, c = bits.Add64(r1, hi, 0)
	hi, lo := bits.Mul64(x1, x1)
	r2, c = bits.Add64(r2, lo, c)
	r3, c = bits.Add64(r3, hi, c)
	hi, lo = bits.Mul64(x2, x2)
	r4, c = bits.Add64(r4, lo, c)
	r5, c = bits.Add64(r5, hi, c)
	hi, lo = bits.Mul64(x3, x3)
	r6, c = bits.Add64(r6, lo, c)
	r7, _ = bits.Add64(r7, hi, c)
	// Reduce r0..r3 (t4 is the carry above the four limbs kept).
	t0, t1, t2, t3, t4 := r0, r1, r2, r3, uint64(0)
	for range 4 {
		t0, t1, t2, t3, t4 = montStep(t0, t1, t2, t3, t4)
	}
	// Add the high half: below 2p (x² < p², so the high half is below p).
	t0, c = bits.Add64(t0, r4, 0)
	t1, c = bits.Add64(t1, r5, c)
	t2, c = bits.Add64(t2, r6, c)
	t3, c = bits.Add64(t3, r7, c)
	reduceOnce(z, t0, t1, t2, t3, t4+c)
}

// reduceOnce sets z to t4:t3:t2:t1:t0 (below 2p) minus p if that is not
// negative.
func reduceOnce(z *fe, t0, t1, t2, t3, t4 uint64) {
	s0, b := bits.Sub64(t0, p0, 0)
	s1, b := bits.Sub64(t1, p1, b)
	s2, b := bits.Sub64(t2, p2, b)
	s3, b := bits.Sub64(t3, p3, b)
	_, b = bits.Sub64(t4, 0, b)
	// b is 1 when t < p: keep t.
	keep := -b
	z[0] = t0&keep | s0&^keep
	z[1] = t1&keep | s1&^keep
	z[2] = t2&keep | s2&^keep
	z[3] = t3&keep | s3&^keep
}

// feAdd sets z = x + y mod p.
func feAdd(z, x, y *fe) {
	t0, c := bits.Add64(x[0], y[0], 0)
	t1, c := bits.Add64(x[1], y[1], c)
	t2, c := bits.Add64(x[2], y[2], c)
	t3, c := bits.Add64(x[3], y[3], c)
	reduceOnce(z, t0, t1, t2, t3, c)
}

// feSub sets z = x − y mod p.
func feSub(z, x, y *fe) {
	t0, b := bits.Sub64(x[0], y[0], 0)
	t1, b := bits.Sub64(x[1], y[1], b)
	t2, b := bits.Sub64(x[2], y[2], b)
	t3, b := bits.Sub64(x[3], y[3], b)
	// Add p back when it went below zero.
	m := -b
	var c uint64
	z[0], c = bits.Add64(t0, p0&m, 0)
	z[1], c = bits.Add64(t1, p1&m, c)
	z[2], c = bits.Add64(t2, p2&m, c)
	z[3], _ = bits.Add64(t3, p3&m, c)
}

// feNeg sets z = −x mod p.
func feNeg(z, x *fe) { feSub(z, &fe{}, x) }

func (x *fe) isZero() bool { return x[0]|x[1]|x[2]|x[3] == 0 }

func (x *fe) equal(y *fe) bool {
	return (x[0]^y[0])|(x[1]^y[1])|(x[2]^y[2])|(x[3]^y[3]) == 0
}

// feInv sets z = x^-1 mod p (Fermat: x^(p−2)); zero stays zero. It is
// used only when a table is built.
func feInv(z, x *fe) {
	// p − 2 = 2^256 − 2^224 + 2^192 + 2^96 − 3, by a square-and-multiply
	// over its bits from the top.
	e := fe{p0 - 2, p1, p2, p3}
	r := feOne
	for i := 255; i >= 0; i-- {
		feSqr(&r, &r)
		if e[i/64]>>(i%64)&1 == 1 {
			feMul(&r, &r, x)
		}
	}
	*z = r
}
